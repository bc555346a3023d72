package config

import (
	"fmt"

	"github.com/reconcilehq/reconcile/schedule"
)

// configDocs documents every key of Config and every section (a struct
// field), by its path. config.example.yaml and docs/configuration.md are
// generated from it and from Default (`go generate ./config`);
// TestConfigDocsGenerated fails when a key has no entry here, when an entry
// names no key, or when the committed files are stale.
//
// Write for the person configuring reconcile: what the key does, its unit,
// and what the default means when it is not obvious; the default value
// itself is printed beside it. A secret's entry is one short line (it is
// listed in the example file's header, by its environment variable).
var configDocs = map[string]string{
	"database_url": "The database: postgres://user@host/db (production; replicas share it) or sqlite:PATH " +
		"(embedded, one process). Flag --database-url, env RECONCILE_DATABASE_URL.",

	"database_read_url": "A read replica of database_url (a PostgreSQL streaming standby): reports (runs, findings), " +
		"the console's lists and a run's matching read there while it keeps up. PostgreSQL only. " +
		"Env RECONCILE_DATABASE_READ_URL.",
	"database_read_max_lag": "Reads go to the primary while the replica lags more than this: none when its WAL receiver " +
		"streams and it has replayed all it received (seen by a user with pg_monitor), otherwise " +
		"now() - pg_last_xact_replay_timestamp() on the replica.",

	"database":           "The database connection.",
	"database.max_conns": "PostgreSQL pool size; 0 is pgx's default, max(4, CPUs).",

	"log":        "Logging, to standard error.",
	"log.level":  "debug, info, warn or error.",
	"log.format": "text, json, or auto: text on a terminal, JSON otherwise.",

	"http":        "The HTTP server of `reconcile serve`.",
	"http.listen": "Public port: provider callbacks, Stripe webhooks, the intents API.",
	"http.admin_listen": "Admin port: /metrics, /healthz, /readyz, in every process whatever its roles. " +
		"Loopback only by default; \":8081\" to be scraped from elsewhere.",
	"http.read_timeout":   "Bound to read a request, headers and body.",
	"http.write_timeout":  "Bound to write a response.",
	"http.max_body_bytes": "Largest request body, in bytes.",
	"http.api_token":      "bearer token of the intents API",

	"roles":           "Parts of `reconcile serve`; switch some off to split a large deployment.",
	"roles.http":      "The public port: callbacks, webhooks, the intents API.",
	"roles.workers":   "River workers: charges, outgoing events, alerts, scheduled runs.",
	"roles.scheduler": "Leader-elected periodic reconcile runs (see schedules).",

	"workers":         "Jobs of each queue run at once in this process.",
	"workers.charges": "Charge jobs (calls to the providers).",
	"workers.events":  "Deliveries of outgoing events.",
	"workers.alerts":  "Deliveries of Slack alerts (at least 1 when alerts are on).",
	"workers.runs":    "Scheduled reconcile runs (at least 1 when schedules are set).",

	"queue":              "The job queue (River), shared by charges, events, alerts and scheduled runs.",
	"queue.job_timeout":  "Bound on one try of a job.",
	"queue.rescue_after": "A job whose worker died runs again after this (at least job_timeout).",
	"queue.shutdown_grace": "On SIGTERM, running jobs and requests get this long before they are " +
		"cancelled.",
	"queue.retry_base": "Retry backoff of failed jobs of every kind: the first retry waits retry_base, " +
		"doubled each time, at most retry_max, with jitter.",
	"queue.retry_max": "Longest wait between two tries of a job.",

	"charges":       "Charge jobs.",
	"charges.lease": "How long a worker holds an intent; more than half of queue.job_timeout.",
	"charges.max_attempts": "Tries of a charge job before it is discarded (listed by `reconcile jobs list`; " +
		"the intent stays pending and the reconciler reports it as stuck). With the default backoff they " +
		"span about 40 minutes, far inside Stripe's 24-hour idempotency key retention; a setting whose " +
		"retries would span more than 20 hours is refused.",
	"charges.pending_poll": "How often an accepted but unfinished charge (an STK prompt) or refund (an " +
		"M-Pesa reversal awaiting its result) is asked about.",
	"charges.pending_give_up": "When a still-pending charge or refund is given up as unknown, for the " +
		"reconciler to settle.",
	"charges.receipt_poll": "How often a refund that cannot be sent yet looks again: an M-Pesa reversal names " +
		"the charge's receipt, which a lost callback never brought; the refund waits (shown in the console) " +
		"and is sent as soon as a pull, a callback or a statement brings it.",
	"charges.receipt_wait": "How long such a refund waits for the receipt before it fails, nothing sent.",

	"events": "Outgoing events (charge.succeeded, charge.failed, charge.unknown, and refund.succeeded, " +
		"refund.failed, refund.unknown for refund intents), POSTed as JSON to every " +
		"endpoint, signed with RECONCILE_EVENTS_SIGNING_SECRET (header Reconcile-Signature: " +
		"v1=hex(HMAC-SHA256(secret, timestamp + \".\" + body))), with the event id as Idempotency-Key.",
	"events.endpoints":      "URLs that receive every event.",
	"events.signing_secret": "signs outgoing events (HMAC-SHA256)",

	"reconcile": "Reconcile runs.",
	"reconcile.tolerance": "Each window is widened by this on both sides when linking evidence, so an " +
		"intent at 23:59:50 matches its receipt at 00:00:20.",
	"reconcile.lease": "How long a run holds its window against other replicas; a live run renews it " +
		"every third of this, so only a dead run's window is taken over. A scheduled run (serve) is " +
		"also stopped and retried after this long; `reconcile run` has no such limit.",
	"reconcile.fuzzy": "Link evidence without a reference by amount, currency and customer when exactly " +
		"one candidate fits (marked fuzzy).",
	"reconcile.statement_grace": "Intents younger than this are not called missing by the generic CSV " +
		"statement providers (statements); M-Pesa and Stripe have their own settlement_grace.",

	"alerts": "Slack alerts for finance ops.",
	"alerts.mode": "off, webhook (incoming webhooks) or bot (a bot token: threads, resolved banners, and " +
		"no duplicate after a crash; needs chat:write and channels:history).",
	"alerts.channel": "Run summaries and alerts without a severity channel. Bot mode: a channel id " +
		"(C0123...). Webhook mode: a name whose URL is in RECONCILE_ALERTS_WEBHOOK_URL.",
	"alerts.severity_channels": "Finding alerts by severity (low, medium, high), e.g. {high: C0URGENT}. " +
		"Webhook mode: each channel's URL is in RECONCILE_ALERTS_WEBHOOK_URL_<NAME> (upper case, - as _).",
	"alerts.immediate_severity": "The lowest severity alerted on its own, not only in the run summary.",
	"alerts.immediate_min_at_risk": "Per currency, the least amount at risk alerted on its own, " +
		"e.g. [\"KES 1000\", \"USD 10\"].",
	"alerts.summary_when_clean": "Post a summary for windows without findings too.",
	"alerts.summary_top":        "Findings listed in a summary (1-10).",
	"alerts.findings_url": "Page listing findings (no credentials in it); default: the console's " +
		"findings page when the console is served and its address is known (console.public_url).",
	"alerts.zone": "Zone times are shown in, with their offset; empty: each provider's own zone " +
		"(providers.*.zone, Nairobi time for M-Pesa).",
	"alerts.channel_interval": "Time between messages to one channel (Slack allows about one per second).",
	"alerts.max_attempts":     "Tries of a delivery before it is discarded.",
	"alerts.api_url":          "Slack Web API base URL.",
	"alerts.bot_token":        "Slack bot token (xoxb-...), alerts.mode bot",
	"alerts.webhook_url": "Slack incoming webhook of alerts.channel, alerts.mode webhook; _<CHANNEL>: " +
		"of a severity channel",
	"alerts.signing_secret": "Slack app signing secret, verifies alerts.interactions",
	"alerts.interactions": "Bot mode: Acknowledge and Resolve buttons on finding messages, and a link to " +
		"the finding's page next to findings_url. Serves POST /slack/interactions (set it as the app's " +
		"Interactivity Request URL), verified with RECONCILE_ALERTS_SIGNING_SECRET. The app needs " +
		"chat:write and usergroups:read.",
	"alerts.interactions.enabled": "Put the buttons on finding messages and serve the endpoint.",
	"alerts.interactions.allowed_users": "Slack users (U0123...) who may act; others are told so, " +
		"privately.",
	"alerts.interactions.allowed_groups": "Slack user groups (S0123...) whose members may act.",

	"console": "The web console for finance ops, under /console on the HTTP listener.",
	"console.mode": "off, local (this machine only, one person: local_user, an operator), proxy (people " +
		"signed in by an authenticating reverse proxy) or oidc (the company's OpenID Connect provider; " +
		"see oidc).",
	"console.local_user": "The one person of local mode; default: the operating system user.",
	"console.user_header": "Proxy mode: the header carrying the person's e-mail, accepted only from " +
		"trusted_proxies.",
	"console.trusted_proxies": "Proxy mode: the addresses or networks (CIDR) user_header is accepted from.",
	"console.operators": "Who may act (acknowledge, resolve, reopen, dismiss, replay, retry). oidc " +
		"mode: e-mail addresses or groups from the ID token's groups claim.",
	"console.viewers": "Who may read; \"*\" lets anyone the proxy or the provider signed in read.",
	"console.oidc": "oidc mode: the sign-in. Secrets: RECONCILE_CONSOLE_OIDC_CLIENT_SECRET, and " +
		"RECONCILE_CONSOLE_OIDC_SESSION_KEY (at least 32 characters) sealing the session cookies.",
	"console.oidc.issuer":        "The provider's issuer URL (discovery at ISSUER/.well-known/openid-configuration).",
	"console.oidc.client_id":     "The console's client id at the provider.",
	"console.oidc.client_secret": "OpenID Connect client secret of the console",
	"console.oidc.redirect_url":  "Registered with the provider; ends in /console/callback.",
	"console.oidc.scopes": "Scopes asked for; add the one that brings the groups claim if the provider " +
		"needs one (often groups).",
	"console.oidc.groups_claim": "The ID token claim listing the person's groups.",
	"console.oidc.session_key":  "seals the console's session cookies (at least 32 characters)",
	"console.oidc.session_ttl":  "How long a sign-in lasts.",
	"console.public_url": "The console's address as people reach it, e.g. https://reconcile.example.com; " +
		"default in oidc mode: the origin of oidc.redirect_url. Slack's links go to its findings pages.",
	"console.listen": "A listener of its own for the console (an internal address, say); empty: under " +
		"/console on http.listen.",

	"providers":       "The payment providers.",
	"providers.mpesa": "Safaricom M-Pesa (Daraja).",
	"providers.mpesa.zone": "Where date-only windows (--from 2026-11-02) and scheduled windows are cut. " +
		"M-Pesa's own timestamps carry no zone and are always read as Nairobi time (EAT, UTC+3).",
	"providers.mpesa.settlement_grace": "Intents younger than this are not called missing.",
	"providers.mpesa.reference_normalise": "Link the account number a payer types to the intent's " +
		"reference by its normal form: case, spaces, dashes, dots, slashes, underscores and other " +
		"separators ignored (\" inv-1001 \" links INV1001). false compares them as given, case aside.",
	"providers.mpesa.horizon": "How far each way from its window a run looks up the intents and payments " +
		"of other days that its leftovers belong to: an invoice paid days after it was issued, in parts " +
		"over a week, a reversal of last week's payment. Index look-ups only, whatever the horizon.",
	"providers.mpesa.intent_kind": "What an imported intent that names no kind and no provider_refs is: " +
		"expected (a paybill invoice the customer pays when and in as many parts as they choose) or " +
		"charge (an STK push we initiated, taken once).",
	"providers.mpesa.base_url":   "Daraja; sandbox: https://sandbox.safaricom.co.ke",
	"providers.mpesa.short_code": "The PayBill or till that receives payments.",
	"providers.mpesa.party_b":    "The till's store number, when it differs from short_code.",
	"providers.mpesa.transaction_type": "CustomerPayBillOnline or CustomerBuyGoodsOnline. Charging (STK " +
		"push) needs RECONCILE_PROVIDERS_MPESA_CONSUMER_KEY, _CONSUMER_SECRET, _PASS_KEY, short_code, " +
		"and the callbacks.",
	"providers.mpesa.http_timeout":    "Bound on one Daraja request.",
	"providers.mpesa.consumer_key":    "Daraja app consumer key",
	"providers.mpesa.consumer_secret": "Daraja app consumer secret",
	"providers.mpesa.pass_key":        "Lipa Na M-Pesa Online pass key",
	"providers.mpesa.initiator": "The API operator refunds (Reversal API) and their status queries act as; " +
		"it needs the Org Reversals Initiator role. Empty: M-Pesa refunds are not sent.",
	"providers.mpesa.security_credential": "The initiator's encrypted password as the Daraja portal generates it.",
	"providers.mpesa.callbacks": "The callback intake of `reconcile serve`, served when " +
		"RECONCILE_PROVIDERS_MPESA_CALLBACKS_PATH_TOKEN is set, at <prefix>/<token>/stk, /c2b/validation, " +
		"/c2b/confirmation, /b2c/result, /b2c/timeout, /reversal/result, /reversal/timeout, " +
		"/status/result, /status/timeout.",
	"providers.mpesa.callbacks.path_token": "unguessable path part of the callback URLs (>= 32 of A-Za-z0-9_-)",
	"providers.mpesa.callbacks.public_url": "This service's public base URL as Safaricom reaches it " +
		"(HTTPS in production); callback URLs are built from it.",
	"providers.mpesa.callbacks.prefix":    "Path prefix of the callbacks.",
	"providers.mpesa.callbacks.allow_ips": "Addresses callbacks may come from; empty means Safaricom's published list.",
	"providers.mpesa.callbacks.allow_any_ip": "Turn the address check off (only behind a gateway that " +
		"does it).",
	"providers.mpesa.callbacks.trusted_proxies": "Addresses or CIDRs whose X-Forwarded-For is believed.",
	"providers.mpesa.callbacks.max_body_bytes":  "Largest callback body, in bytes.",
	"providers.mpesa.callbacks.read_timeout":    "Bound to read a callback.",
	"providers.mpesa.pull": "Pull Transactions API: fills C2B payments whose callbacks never came, for " +
		"windows younger than 48 hours, before each run. The short code must be registered for pulling once: " +
		"serve does it at start, `reconcile providers register mpesa` by hand.",
	"providers.mpesa.pull.enabled":          "Pull before each run (and register the short code for pulling).",
	"providers.mpesa.pull.nominated_number": "Pull Transactions API nominated number",
	"providers.mpesa.pull.max_pages":        "Most pages one pull reads.",
	"providers.mpesa.accounts": "Other paybills and tills of the business, each an account reconciled apart from " +
		"the default one (short_code): its intents (the account column or field), statements " +
		"(`reconcile import statement --account`), C2B callbacks (by BusinessShortCode), pulls, runs and findings " +
		"are its own. An account charges and pulls with the provider's credentials unless the environment gives it " +
		"its own: RECONCILE_PROVIDERS_MPESA_ACCOUNTS_<SHORT_CODE>_CONSUMER_KEY, _CONSUMER_SECRET, _PASS_KEY and " +
		"_PULL_NOMINATED_NUMBER (docs/operations.md, \"Several accounts\").",
	"providers.stripe.accounts": "Other Stripe accounts, each an account reconciled apart from the default one " +
		"(api_key's): its charges, refunds, pulls, payouts and webhook events are its own, and its reports are imported " +
		"with `reconcile import statement --provider stripe --account acct_...`. A connected account of a Connect " +
		"platform is reached through the platform's key on its behalf (the Stripe-Account header), and its webhook " +
		"events are placed by their account field (an event of a connected account not listed is kept in quarantine). " +
		"A separate account (one per region, say) gets its own from the environment, named after its id in upper case: " +
		"RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_<ID>_API_KEY (its requests then use that key and no Stripe-Account " +
		"header; it needs api_key too) and RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_<ID>_WEBHOOK_SECRETS, comma-separated " +
		"(an event they verify is the account's; one naming another account is kept in quarantine) " +
		"(docs/operations.md, \"Several accounts\").",
	"providers.stripe": "Stripe. Charging and pulling need RECONCILE_PROVIDERS_STRIPE_API_KEY; report " +
		"imports and webhooks do not.",
	"providers.stripe.zone":                "Where date-only windows live.",
	"providers.stripe.settlement_grace":    "Intents younger than this are not called missing.",
	"providers.stripe.reference_normalise": "Link echoed references by their normal form (see mpesa).",
	"providers.stripe.horizon":             "How far each way from its window a run looks (see mpesa).",
	"providers.stripe.intent_kind":         "What an imported intent that names no kind and no provider_refs is: charge or expected (see mpesa).",
	"providers.stripe.api_key":             "Stripe secret key (sk_live_... / sk_test_...)",
	"providers.stripe.base_url":            "Points at stripe-mock or a fake; empty is api.stripe.com.",
	"providers.stripe.max_network_retries": "Re-sends of a request that failed on the network or with a " +
		"409 or 5xx, by the Stripe library, with the same idempotency key.",
	"providers.stripe.timeout":                   "Bound on one request.",
	"providers.stripe.payment_method":            "Charges intents whose metadata names no payment_method.",
	"providers.stripe.pull_balance_transactions": "Also pull fees and payouts (balance transactions).",
	"providers.stripe.page_size":                 "Objects per list request (1-100).",
	"providers.stripe.report_timezone":           "Zone of the itemized reports' non-_utc columns (the report's timezone parameter).",
	"providers.stripe.webhook_secrets":           "webhook signing secrets (whsec_...), comma-separated",
	"providers.stripe.webhook_tolerance": "The webhook (POST /webhooks/stripe) is served when " +
		"RECONCILE_PROVIDERS_STRIPE_WEBHOOK_SECRETS, or an account's own webhook secrets, are set; signatures " +
		"older than this are refused.",
	"providers.stripe.intent_metadata_key": "PaymentIntent metadata key that carries the intent key: " +
		"charges write it, pulls and webhooks read it, and reports need its column, " +
		"payment_metadata[intent_key] (docs/stripe.md).",

	"statements": "Statement layouts for banks and providers without an adapter, each a provider of its " +
		"own (`reconcile import statement --provider equity-bank FILE`). Columns are named by header; " +
		"docs/formats.md describes every field.",

	"banks": "Bank accounts, each a provider of its own named bank:<name>: its statements are imported with " +
		"`reconcile import statement --provider bank:<name>` (camt053, mt940, bai2, or a CSV layout of statements), " +
		"refused when of another account or currency or when they do not add up, and its runs match the payouts " +
		"of the providers listed under from to its credits (docs/design.md, \"Payouts and the bank\").",

	"schedules": "Periodic reconcile runs in `reconcile serve`, by provider. Only the leader among " +
		"replicas schedules; each window is run once (the run claim is the last defence).",

	"approvals": "The two-person rule for money: a refund or a write-off from a finding above its " +
		"currency's threshold waits for another operator to approve it (console, Slack, command line or API); " +
		"the person who asked cannot approve it, and a rejected or expired request changes nothing.",
	"approvals.thresholds": "Amount above which a refund or write-off needs a second person, per currency, " +
		"in major units, e.g. {KES: \"10000\", USD: \"100\"}. A currency not listed needs none.",
	"approvals.expire_after": "How long a request waits for its approval; after it, it is expired and does nothing.",

	"limits": "Limits at the edge: input beyond them is refused with its field named and kept in the " +
		"quarantine (docs/security.md lists them all).",
	"limits.max_amounts": "Largest amount accepted per currency, in major units, e.g. KES: \"1000000000\". " +
		"A currency not listed accepts up to 10^15 minor units (USD 10 trillion); the most that may be " +
		"set is 10^17 minor units.",
	"books": "Work on the books as a whole: reconcile books copy|verify|prune|erase.",
	"books.retention": "How long raw payloads (callback bodies, statement lines, quarantined input, resolved " +
		"findings' detail) are kept: books prune without --before or --older-than removes older ones. 0 keeps them.",
	"books.erase_key": "The key a person's identifiers are turned into a token with by books erase (at least 16 " +
		"bytes; keep it, and keep it the same).",
}

// configExamples are shown, commented out, after a list or map of sections
// whose default is empty.
var configExamples = map[string]string{
	"providers.stripe.accounts": `- id: acct_1NxKenya0000000           # the account, which names it
  name: kenya                        # a label for people (optional)
  # A separate account's own key and webhook secrets come from the environment only:
  # RECONCILE_PROVIDERS_STRIPE_ACCOUNTS_ACCT_1NXKENYA0000000_API_KEY and _WEBHOOK_SECRETS`,
	"providers.mpesa.accounts": `- short_code: "600639"             # the account's paybill or till number, which names it
  name: westlands                    # a label for people (optional)`,
	"statements": `- provider: equity-bank
  delimiter: ","
  id: Transaction Ref
  time: Value Date
  time_format: "02/01/2006 15:04"   # a Go time layout
  zone: Africa/Nairobi               # required unless the layout has an offset
  debit: Debit                       # or amount: Amount (signed)
  credit: Credit
  thousands_separator: ","
  fixed_currency: KES                # or currency: Currency
  status: Status
  status_map: {posted: succeeded, pending: pending, reversed: failed}
  reference: Narrative
  counterparty: Payer`,
	"banks": `- name: equity-kes                 # the provider is bank:equity-kes
  account: "0100012345678"           # IBAN or number; statements of another account are refused
  currency: KES
  zone: Africa/Nairobi               # the bank's days start at midnight here (default UTC)
  format: mt940                      # camt053, mt940, bai2, or a layout under statements
  arrival_days: 3                    # business days a payout may take to arrive (default 3)
  from:
    - provider: mpesa
      shortcode: "600638"            # the paybill the settlement's text names
      narrative: "MPESA|M-PESA"      # a regular expression, case aside
- name: chase-usd
  account: "4401234567"
  currency: USD
  zone: America/New_York
  format: bai2
  from:
    - provider: stripe
      descriptor: STRIPE
      payout_days: 2                 # business days from a charge to its payout (default 2)
      # account: acct_1Nv0FGQ9RKHgCVdK  # whose payouts these are (pulled with that account's
      #                                 # client before a run): an account of
      #                                 # providers.stripe.accounts, or an M-Pesa paybill of
      #                                 # providers.mpesa.accounts (default the provider's own)`,
	"schedules": fmt.Sprintf(`mpesa:
  # When: five cron fields, six with leading seconds, or @daily; CRON_TZ= sets the zone.
  cron: "CRON_TZ=Africa/Nairobi 30 2 * * *"
  # Window length, aligned to midnight in the provider's zone; must divide a day. Default %s.
  window: 24h
  # Earlier windows each run reconciles again, for late evidence. Default %d.
  lookback: 2
  # Missed windows run after downtime, at most. Default %d.
  catch_up: 7
stripe:
  # Without RECONCILE_PROVIDERS_STRIPE_API_KEY Stripe cannot be pulled and a schedule is
  # refused unless no_pull: true says to reconcile imported reports and webhooks only.
  no_pull: false
  cron: "0 3 * * *"`, formatDuration(schedule.DefaultSize), schedule.DefaultLookback, schedule.DefaultCatchUp),
}
