package queue

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/riverqueue/river"
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

// States are the job states, in the order people are told them.
var States = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateRunning, rivertype.JobStateRetryable,
	rivertype.JobStateScheduled, rivertype.JobStateDiscarded, rivertype.JobStateCancelled, rivertype.JobStateCompleted,
	rivertype.JobStatePending}

// ListParams are the parameters of a list of jobs, newest first: at most
// limit jobs of the named states (by default every state but completed)
// and kinds (by default every kind). An unknown state is an error.
func ListParams(states, kinds []string, limit int) (*river.JobListParams, error) {
	params := river.NewJobListParams().First(limit).OrderBy(river.JobListOrderByID, river.SortOrderDesc)
	var st []rivertype.JobState
	for _, s := range states {
		i := slices.Index(States, rivertype.JobState(s))
		if i < 0 {
			return nil, fmt.Errorf("%q: want one of available, running, retryable, scheduled, discarded, cancelled, completed, pending", s)
		}
		st = append(st, States[i])
	}
	if len(st) == 0 {
		st = slices.DeleteFunc(slices.Clone(States), func(s rivertype.JobState) bool { return s == rivertype.JobStateCompleted })
	}
	params = params.States(st...)
	if len(kinds) > 0 {
		params = params.Kinds(kinds...)
	}
	return params, nil
}
