package books

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reconcilehq/reconcile/ledger/engine"
)

// notCopied are the tables whose rows are the state of a process, not the
// books, and which a copy leaves to the target: each engine's migrators
// record their own migrations, and River's leadership lease and SQLite
// notification outbox last seconds.
var notCopied = map[string]string{
	"goose_db_version":   "the ledger's migrations, applied to the target by its own migrator",
	"river_migration":    "River's migrations, applied to the target by River's migrator",
	"river_leader":       "which process leads River's maintenance, a lease of seconds",
	"river_notification": "River's outbox of notifications, gone once read",
}

// tablePlan is how one table is copied: which columns, read and written as
// which types, and what is verified.
type tablePlan struct {
	name string
	// cols are read from the source and written to the target, each with
	// its type for both (src and dst keep each side's declaration).
	src, dst []engine.Column
	// keys and amounts index cols: the primary key's columns, and the
	// columns of exact amounts.
	keys, amounts []int
}

// plan decides what a copy from the tables src to the tables dst does, in
// an order that writes every table after those its foreign keys name.
func plan(src, dst []engine.Table) ([]tablePlan, error) {
	targets := map[string]engine.Table{}
	for _, t := range dst {
		targets[t.Name] = t
	}
	var out []tablePlan
	for _, s := range src {
		if _, skip := notCopied[s.Name]; skip {
			continue
		}
		d, ok := targets[s.Name]
		if !ok {
			return nil, fmt.Errorf("books: table %s is in the source but not in the target", s.Name)
		}
		p, err := planTable(s, d)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return order(out, src, dst)
}

func planTable(s, d engine.Table) (tablePlan, error) {
	p := tablePlan{name: s.Name}
	for _, sc := range s.Columns {
		if sc.Generated {
			continue
		}
		dc, ok := d.Column(sc.Name)
		if !ok || dc.Generated {
			if sc.Derived {
				continue // computed from other columns where it exists
			}
			return p, fmt.Errorf("books: column %s.%s is in the source but not written in the target", s.Name, sc.Name)
		}
		t, err := resolve(sc, dc)
		if err != nil {
			return p, fmt.Errorf("books: column %s.%s: %w", s.Name, sc.Name, err)
		}
		if slices.Contains(s.Key, sc.Name) {
			p.keys = append(p.keys, len(p.src))
		}
		if t == engine.TypeDecimal {
			p.amounts = append(p.amounts, len(p.src))
		}
		p.src = append(p.src, sc.As(t))
		p.dst = append(p.dst, dc.As(t))
	}
	for _, dc := range d.Columns {
		if _, ok := s.Column(dc.Name); ok || dc.Generated || dc.Derived || dc.HasDefault || !dc.NotNull {
			continue
		}
		return p, fmt.Errorf("books: column %s.%s is required in the target and not in the source", d.Name, dc.Name)
	}
	if len(p.keys) == 0 {
		// Without a primary key every column identifies the row.
		for i, c := range p.src {
			switch c.Type {
			case engine.TypeText, engine.TypeInt, engine.TypeDecimal, engine.TypeBool, engine.TypeBytes:
				p.keys = append(p.keys, i)
			}
		}
	}
	return p, nil
}

// resolve is the type a column is copied as: what the engine that says
// more declares it (PostgreSQL's over SQLite's TEXT, INTEGER and BLOB).
func resolve(src, dst engine.Column) (engine.Type, error) {
	var t engine.Type
	switch {
	case src.Exact && dst.Exact:
		if src.Type != dst.Type {
			return 0, fmt.Errorf("%s (%s) in the source, %s (%s) in the target", src.Decl, src.Type, dst.Decl, dst.Type)
		}
		t = src.Type
	case src.Exact:
		t = src.Type
	case dst.Exact:
		t = dst.Type
	case src.Type == dst.Type:
		t = src.Type
	case src.Type == engine.TypeJSON && dst.Type == engine.TypeBytes,
		src.Type == engine.TypeBytes && dst.Type == engine.TypeJSON:
		// A BLOB of binary JSON on one side, one still empty on the
		// other.
		t = engine.TypeJSON
	default:
		return 0, fmt.Errorf("%s (%s) in the source, %s (%s) in the target", src.Decl, src.Type, dst.Decl, dst.Type)
	}
	if t == engine.TypeUnknown {
		return 0, fmt.Errorf("type %s cannot be copied", cmpDecl(src, dst))
	}
	return t, nil
}

func cmpDecl(src, dst engine.Column) string {
	if src.Exact {
		return src.Decl
	}
	return dst.Decl
}

// order sorts plans so that a table comes after every table its foreign
// keys name, in either database; otherwise by name.
func order(plans []tablePlan, schemas ...[]engine.Table) ([]tablePlan, error) {
	deps := map[string][]string{}
	for _, ts := range schemas {
		for _, t := range ts {
			for _, r := range t.References {
				if r != t.Name {
					deps[t.Name] = append(deps[t.Name], r)
				}
			}
		}
	}
	byName := map[string]tablePlan{}
	var names []string
	for _, p := range plans {
		byName[p.name] = p
		names = append(names, p.name)
	}
	slices.Sort(names)
	var out []tablePlan
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string, path []string) error
	visit = func(n string, path []string) error {
		switch state[n] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("books: the foreign keys of %s form a cycle", strings.Join(append(path, n), " -> "))
		}
		state[n] = 1
		ds := slices.Clone(deps[n])
		slices.Sort(ds)
		for _, d := range ds {
			if _, ok := byName[d]; ok {
				if err := visit(d, append(path, n)); err != nil {
					return err
				}
			}
		}
		state[n] = 2
		out = append(out, byName[n])
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}
