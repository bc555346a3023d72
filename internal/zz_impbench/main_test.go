package impbench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
)

func TestImp(t *testing.T) {
	ctx := context.Background()
	url := os.Getenv("IMP_URL")
	if url == "" {
		os.Remove("/tmp/intb/prof.db")
		url = "sqlite:/tmp/intb/prof.db"
	}
	s, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := database.Migrate(ctx, s); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		f, _ := os.Open(os.Getenv("IMP_FILE"))
		st := time.Now()
		res, err := intentcsv.Import(ctx, s, "x", f, time.Now(), nil)
		t.Logf("%+v %v %v", res, err, time.Since(st))
		f.Close()
	}
}
