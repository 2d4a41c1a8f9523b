package supersession

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
)

// The LLM judge's windows in the database (supersessiond.llm_windows): a
// window is claimed before it is asked and holds its answer for good, so it
// is asked once across replicas and restarts, and the hour's requests
// (supersessiond.llm_spend) are counted where every replica sees them. The
// claim is one short transaction that takes an advisory lock, reads the
// hour's spend, claims at most what is left and records it: two replicas
// can neither claim one window nor both spend the last request. The LLM is
// asked after it commits, never inside it.

// readWindowsSQL is what the table knows of the given windows: an answer,
// a claim still running (busy) or a failure backing off (waiting).
const readWindowsSQL = `
SELECT w.key, w.state, coalesce(w.verdict, 'null'::jsonb) AS verdict,
       (w.state = 'claimed' AND w.claimed_until > now()) AS busy,
       (w.state = 'failed' AND w.next_attempt_at > now()) AS waiting
FROM {{.Windows}} w
WHERE w.key = ANY($1::bytea[])`

// spendLockKey is the second key of the spend's advisory lock (the first
// is claimLockClass): "SPND".
const spendLockKey = "1397771844"

const lockSpendSQL = `SELECT pg_advisory_xact_lock(` + claimLockClass + `, ` + spendLockKey + `)`

// spentSQL is the requests of the last sixty minutes, every replica's.
const spentSQL = `SELECT coalesce(sum(requests), 0) FROM {{.Spend}} WHERE minute > now() - interval '1 hour'`

// claimWindowsSQL claims, in the order given, at most :n of the windows no
// one answered, holds or waits on, records them as requests of this minute
// and forgets minutes older than a day.
const claimWindowsSQL = `
WITH want AS (
  SELECT k.key FROM unnest(CAST(:keys AS bytea[])) WITH ORDINALITY AS k(key, ord)
  LEFT JOIN {{.Windows}} w ON w.key = k.key
  WHERE w.key IS NULL
     OR (w.state = 'claimed' AND w.claimed_until <= now())
     OR (w.state = 'failed' AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= now()))
  ORDER BY k.ord
  LIMIT :n
), claimed AS (
  INSERT INTO {{.Windows}} AS w (key, model, state, claimed_by, claimed_until, attempts)
  SELECT key, :model, 'claimed', :holder, now() + make_interval(secs => :claim_for), 1 FROM want
  ON CONFLICT (key) DO UPDATE SET state = 'claimed', claimed_by = EXCLUDED.claimed_by, claimed_until = EXCLUDED.claimed_until,
    attempts = w.attempts + 1, updated_at = now()
  RETURNING w.key
), spent AS (
  INSERT INTO {{.Spend}} AS s (minute, requests)
  SELECT date_trunc('minute', now()), count(*) FROM claimed HAVING count(*) > 0
  ON CONFLICT (minute) DO UPDATE SET requests = s.requests + EXCLUDED.requests
), pruned AS (
  DELETE FROM {{.Spend}} WHERE minute < now() - interval '1 day'
)
SELECT key FROM claimed`

// answerWindowSQL stores a window's answer; the first answer stays.
const answerWindowSQL = `
UPDATE {{.Windows}}
SET state = 'answered', verdict = $2, claimed_by = NULL, claimed_until = NULL, next_attempt_at = NULL, last_error = NULL,
    updated_at = now()
WHERE key = $1 AND state <> 'answered'`

// failWindowSQL gives a claimed window back after a failed or unreadable
// answer: it waits $4 seconds, doubled with each attempt, at most $5.
const failWindowSQL = `
UPDATE {{.Windows}}
SET state = 'failed', claimed_by = NULL, claimed_until = NULL, last_error = left($3, 500), updated_at = now(),
    next_attempt_at = now() + least(make_interval(secs => $4) * power(2, least(greatest(attempts - 1, 0), 20)),
                                    make_interval(secs => $5))
WHERE key = $1 AND claimed_by = $2 AND state = 'claimed'`

// windowStatements are the windows' SQL, rendered for one database.
type windowStatements struct {
	Read, LockSpend, Spent, Answer, Fail string
	Claim                                schema.Named
}

var windowSQL = windowStatements{Read: readWindowsSQL, LockSpend: lockSpendSQL, Spent: spentSQL, Answer: answerWindowSQL,
	Fail: failWindowSQL, Claim: schema.NamedSQL(claimWindowsSQL)}

// How a failed window backs off: a minute, doubled per attempt, at most an
// hour.
const (
	windowBackoff    = time.Minute
	windowBackoffMax = time.Hour
)

// windowState is what the table says of one window.
type windowState struct {
	answered bool
	verdict  llm.WindowVerdict
	busy     bool // another asker holds it
	waiting  bool // backing off after a failure
}

// storedVerdict is a window's answer as stored: by the window's numbers.
type storedVerdict struct {
	Reasoning string           `json:"reasoning"`
	Retired   []llm.Retirement `json:"retired"`
	Ignored   map[string]int   `json:"ignored,omitempty"`
	Usage     llm.Usage        `json:"usage"`
}

// windowStore reads and writes the windows' table.
type windowStore struct {
	db     *sqlx.DB
	sql    windowStatements
	holder string
}

// read returns what the table knows of the given windows, by key.
func (s *windowStore) read(ctx context.Context, keys [][32]byte) (map[[32]byte]windowState, error) {
	rows, err := s.db.QueryContext(ctx, s.sql.Read, byteaArray(keys))
	if err != nil {
		return nil, fmt.Errorf("supersession: read the LLM's windows: %w", err)
	}
	defer rows.Close()
	out := map[[32]byte]windowState{}
	for rows.Next() {
		var key []byte
		var state string
		var raw []byte
		var ws windowState
		if err := rows.Scan(&key, &state, &raw, &ws.busy, &ws.waiting); err != nil {
			return nil, fmt.Errorf("supersession: read the LLM's windows: %w", err)
		}
		if state == "answered" {
			var sv storedVerdict
			if json.Unmarshal(raw, &sv) == nil {
				ws.answered = true
				ws.verdict = llm.WindowVerdict{Reasoning: sv.Reasoning, Retired: sv.Retired, Ignored: sv.Ignored, Usage: sv.Usage}
			}
		}
		var k [32]byte
		copy(k[:], key)
		out[k] = ws
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("supersession: read the LLM's windows: %w", err)
	}
	return out, nil
}

// claim claims at most limit of the windows (in the order given) within
// the hour's budget of perHour requests, for claimFor. It returns those
// claimed and whether the hour's budget ran out before every window it
// could claim was claimed.
func (s *windowStore) claim(ctx context.Context, keys [][32]byte, model string, limit, perHour int, claimFor time.Duration) (map[[32]byte]bool, bool, error) {
	claimed := map[[32]byte]bool{}
	spentOut := false
	err := store.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, s.sql.LockSpend); err != nil {
			return err
		}
		var spent int
		if err := tx.GetContext(ctx, &spent, s.sql.Spent); err != nil {
			return err
		}
		n := min(limit, perHour-spent)
		spentOut = perHour-spent < min(limit, len(keys))
		if n <= 0 {
			return nil
		}
		q, args, err := s.sql.Claim.Bind(map[string]any{"keys": byteaArray(keys), "n": n, "model": model, "holder": s.holder,
			"claim_for": claimFor.Seconds()})
		if err != nil {
			return err
		}
		var got [][]byte
		if err := tx.SelectContext(ctx, &got, q, args...); err != nil {
			return err
		}
		for _, k := range got {
			var key [32]byte
			copy(key[:], k)
			claimed[key] = true
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("supersession: claim the LLM's windows: %w", err)
	}
	return claimed, spentOut, nil
}

// answer stores a window's answer. A failure to store costs a repeated
// question later (the claim expires), never a wrong decision: it is logged
// by the caller.
func (s *windowStore) answer(ctx context.Context, key [32]byte, v llm.WindowVerdict) error {
	raw, err := json.Marshal(storedVerdict{Reasoning: v.Reasoning, Retired: v.Retired, Ignored: v.Ignored, Usage: v.Usage})
	if err == nil {
		_, err = s.db.ExecContext(ctx, s.sql.Answer, key[:], raw)
	}
	return err
}

// fail gives a claimed window back to back off.
func (s *windowStore) fail(ctx context.Context, key [32]byte, cause error) error {
	_, err := s.db.ExecContext(ctx, s.sql.Fail, key[:], s.holder, cause.Error(), windowBackoff.Seconds(), windowBackoffMax.Seconds())
	return err
}

func byteaArray(keys [][32]byte) pq.ByteaArray {
	out := make(pq.ByteaArray, len(keys))
	for i := range keys {
		out[i] = keys[i][:]
	}
	return out
}
