package queue_test

import (
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/queue"
)

func TestListParams(t *testing.T) {
	t.Parallel()
	if _, err := queue.ListParams([]string{"dead"}, nil, 10); err == nil ||
		err.Error() != `"dead": want one of available, running, retryable, scheduled, discarded, cancelled, completed, pending` {
		t.Errorf("unknown state: %v", err)
	}
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			q, err := queue.New(e.New(t), queue.Config{})
			if err != nil {
				t.Fatal(err)
			}
			for _, states := range [][]string{nil, {"discarded", "completed"}} {
				params, err := queue.ListParams(states, []string{"charge"}, 5)
				if err != nil {
					t.Fatal(err)
				}
				if res, err := q.List(t.Context(), params); err != nil || len(res.Jobs) != 0 {
					t.Errorf("%v: %d jobs (%v)", states, len(res.Jobs), err)
				}
			}
		})
	}
}
