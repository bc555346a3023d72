package queue

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/riverqueue/river/rivertype"
)

// JobSubject is what a job is about, read from its arguments: the intent,
// event or alert, or the provider and window of a run.
func JobSubject(j *rivertype.JobRow) string {
	var args map[string]any
	if json.Unmarshal(j.EncodedArgs, &args) != nil {
		return ""
	}
	for _, k := range []string{"intent_key", "event_id", "alert_id"} {
		if v, ok := args[k]; ok {
			return fmt.Sprint(v)
		}
	}
	if p, ok := args["provider"]; ok {
		if from, ok := args["from"]; ok {
			return fmt.Sprintf("%v %v/%v", p, from, args["to"])
		}
		return fmt.Sprint(p)
	}
	return ""
}

// LastError is the first line of the job's last error, or "".
func LastError(j *rivertype.JobRow) string {
	if len(j.Errors) == 0 {
		return ""
	}
	msg := j.Errors[len(j.Errors)-1].Error
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
