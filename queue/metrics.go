package queue

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DepthCollector exports the queue's depth at scrape time as
// reconcile_queue_jobs, by queue and state, every queue and state at zero
// when empty.
type DepthCollector struct {
	queue *Queue
	// base is the context a scrape's query derives from: a scrape brings
	// none (prometheus.Collector has no context).
	base context.Context
}

// NewDepthCollector returns the depth collector of q. A scrape's query
// runs in a context of ctx's values, not cancelled with it (a scrape during
// shutdown still answers), bounded to two seconds.
func NewDepthCollector(ctx context.Context, q *Queue) *DepthCollector {
	return &DepthCollector{queue: q, base: context.WithoutCancel(ctx)}
}

var (
	depthDesc = prometheus.NewDesc("reconcile_queue_jobs", "Jobs waiting, running or discarded, by queue and state.",
		[]string{"queue", "state"}, nil)
	depthQueues = []string{QueueCharges, QueueEvents, QueueAlerts, QueueRuns}
	depthStates = []string{"available", "running", "retryable", "scheduled", "pending", "discarded"}
)

// Describe implements prometheus.Collector.
func (d *DepthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- depthDesc }

// Collect implements prometheus.Collector: one query, bounded to two
// seconds.
func (d *DepthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(d.base, 2*time.Second)
	defer cancel()
	depth, err := d.queue.Depth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(depthDesc, err)
		return
	}
	n := map[DepthKey]int64{}
	for _, q := range depthQueues {
		for _, s := range depthStates {
			n[DepthKey{Queue: q, State: s}] = 0
		}
	}
	for k, v := range depth {
		n[k] += v
	}
	for k, v := range n {
		ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(v), k.Queue, k.State)
	}
}
