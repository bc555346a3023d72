package ingest

import (
	"os"
	"runtime/debug"
)

// HeapLimit is the soft heap limit of file imports: they stream in
// batches and need far less, and the collector otherwise lets the heap
// grow to twice what is live before collecting.
const HeapLimit = 192 << 20

// EmbeddedGCPercent lets the heap of an import into SQLite grow to nine
// times what is live between collections, up to HeapLimit. What an import
// keeps live is a few batches, often under 10 MiB: at the default of 100
// the collector ran about 40 times a second, and every cycle preempted the
// goroutine running the embedded engine in mid-statement (a 1M-row SQLite
// intents import takes about a third less CPU at 800). On PostgreSQL the
// engine runs elsewhere: the setting gains nothing there and costs
// resident memory.
const EmbeddedGCPercent = 800

// BoundHeap tunes the collector of a process that imports a file: it sets
// HeapLimit unless GOMEMLIMIT says otherwise and, when the database's
// engine runs in this process (embedded, SQLite), EmbeddedGCPercent unless
// GOGC says otherwise. It changes process-wide settings: only a command
// that does nothing else calls it.
func BoundHeap(embedded bool) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(HeapLimit)
	}
	if os.Getenv("GOGC") == "" && embedded {
		debug.SetGCPercent(EmbeddedGCPercent)
	}
}
