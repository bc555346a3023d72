package main

import (
	"bufio"
	"fmt"
	"os"
	"time"
)

// A format is a file layout reconcile imports, with how to generate n rows
// of it and the import command's arguments.
type format struct {
	name string
	args func(file string) []string
	gen  func(w *bufio.Writer, n int) error
	// tables are the tables the import fills, in an order their foreign
	// keys allow, for the floor baseline.
	tables []string
	// lines says the file is not CSV (a bank statement): the baseline
	// copies its lines into a one-column table.
	lines bool
}

var (
	evidenceTables = []string{"provider_txns", "provider_txn_sources"}
	intentTables   = []string{"intents", "attempts"}
	// A Stripe report's rows name their payout: each row's transactions
	// are items of it.
	reportTables = []string{"provider_txns", "provider_txn_sources", "payout_items"}
	bankTables   = []string{"provider_txns", "provider_txn_sources", "bank_entries"}
)

var formats = []format{
	{name: "mpesa", args: func(f string) []string { return []string{"import", "statement", "--provider", "mpesa", f} }, gen: genMpesa, tables: evidenceTables},
	{name: "stripe", args: func(f string) []string { return []string{"import", "statement", "--provider", "stripe", f} }, gen: genStripe, tables: reportTables},
	{name: "intents", args: func(f string) []string { return []string{"import", "intents", f} }, gen: genIntents, tables: intentTables},
	{name: "bank", args: bankArgs, gen: genBank, tables: bankTables, lines: true},
}

// bankConfig declares the account the bank statement is of.
const bankConfig = `banks:
  - name: bench
    account: "4401234567"
    currency: USD
    zone: America/New_York
    format: mt940
    from:
      - provider: stripe
        descriptor: STRIPE
`

// bankArgs imports file as the statement of bank:bench, declared in a
// config file beside it.
func bankArgs(file string) []string {
	cfg := file + ".yaml"
	if _, err := os.Stat(cfg); err != nil {
		_ = os.WriteFile(cfg, []byte(bankConfig), 0o600)
	}
	return []string{"--config", cfg, "import", "statement", "--provider", "bank:bench", file}
}

// bankPerStatement is how many entries a day's MT940 statement holds.
const bankPerStatement = 10000

// genBank writes an MT940 file of n entries of a USD account, in daily
// statements of bankPerStatement entries: credits of Stripe payouts (their
// id as the payer's reference and in the text) and, every seventh, a
// debit. Every statement adds up.
func genBank(w *bufio.Writer, n int) error {
	bal := int64(100_000_000_00)
	amt := func(c int64) string { return fmt.Sprintf("%d,%02d", c/100, c%100) }
	for start, stmt := 0, 0; start < n; start, stmt = start+bankPerStatement, stmt+1 {
		day := epoch.AddDate(0, 0, stmt).Format("060102")
		fmt.Fprintf(w, ":20:STMT%s%04d\r\n:25:4401234567\r\n:28C:%d/1\r\n:60F:C%sUSD%s\r\n", day, stmt, stmt+1, day, amt(bal))
		for i := start; i < min(start+bankPerStatement, n); i++ {
			cents := int64(1000 + i%500000)
			if i%7 == 6 {
				bal -= cents
				fmt.Fprintf(w, ":61:%s%sDS%sNTRFNONREF//CHG%09d\r\n:86:SUPPLIER PAYMENT %d\r\n", day, day[2:], amt(cents), i, i)
				continue
			}
			bal += cents
			fmt.Fprintf(w, ":61:%s%sCS%sNTRFpo_%012d//ACH%09d\r\n:86:STRIPE PAYOUT po_%012d STRIPE\r\n", day, day[2:], amt(cents), i, i, i)
		}
		fmt.Fprintf(w, ":62F:C%sUSD%s\r\n-\r\n", day, amt(bal))
	}
	return nil
}

var epoch = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

// receipt is the i-th M-Pesa-shaped receipt number: 10 letters and digits.
func receipt(i int) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := []byte("SB00000000")
	for j := len(b) - 1; j >= 2 && i > 0; j-- {
		b[j] = digits[i%36]
		i /= 36
	}
	return string(b)
}

// genMpesa writes an organisation portal statement export: paybill
// receipts over a month, local time (EAT), amounts with thousands
// separators.
func genMpesa(w *bufio.Writer, n int) error {
	fmt.Fprintln(w, "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.")
	balance := 1000000
	for i := range n {
		at := epoch.Add(time.Duration(int64(i)*2592000/int64(max(n, 1))) * time.Second)
		amount := 100 + i%5000
		balance += amount
		acc := fmt.Sprintf("HSE-%d", i%997)
		fmt.Fprintf(w, "%s,%s,%s,Pay Bill from 2547****%04d - MARY ATIENO Acc. %s,Completed,\"%s.00\",,\"%s.00\",TRUE,Pay Bill Online,2547****%04d - MARY ATIENO,,%s\n",
			receipt(i), at.Format("02-01-2006 15:04:05"), at.Add(-2*time.Second).Format("02-01-2006 15:04:05"), i%10000, acc,
			group(amount), group(balance), i%10000, acc)
	}
	return nil
}

// genStripe writes a payout_reconciliation.itemized.5 report of charges.
func genStripe(w *bufio.Writer, n int) error {
	fmt.Fprintln(w, "balance_transaction_id,created_utc,charge_created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_intent_id,customer_id,customer_email,automatic_payout_id,description,payment_metadata[intent_key]")
	for i := range n {
		at := epoch.Add(time.Duration(int64(i)*2592000/int64(max(n, 1))) * time.Second)
		cents := 500 + i%50000
		fee := 30 + cents*29/1000
		fmt.Fprintf(w, "txn_%024d,%s,%s,usd,%d.%02d,%d.%02d,%d.%02d,charge,ch_%024d,ch_%024d,pi_%024d,cus_%014d,,po_%024d,\"Order %d, express\",charge:order-%d\n",
			i, at.Format("2006-01-02 15:04:05"), at.Add(-2*time.Second).Format("2006-01-02 15:04:05"),
			cents/100, cents%100, fee/100, fee%100, (cents-fee)/100, (cents-fee)%100, i, i, i, i%100000, i/1000, i, i)
	}
	return nil
}

// genIntents writes an intents CSV.
func genIntents(w *bufio.Writer, n int) error {
	fmt.Fprintln(w, "key,provider,amount,currency,status,created_at,reference,provider_refs,customer,updated_at")
	for i := range n {
		at := epoch.Add(time.Duration(int64(i)*2592000/int64(max(n, 1))) * time.Second)
		fmt.Fprintf(w, "charge:order-%d,mpesa,%d,KES,succeeded,%s,INV%d,%s,2547%08d,\n",
			i, 100+i%5000, at.Format(time.RFC3339), i, receipt(i), i%100000000)
	}
	return nil
}

// group renders n with thousands separators.
func group(n int) string {
	s := fmt.Sprint(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// generate writes n rows of f to path.
func generate(f format, path string, n int) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(file, 1<<20)
	if err := f.gen(w, n); err != nil {
		file.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}
