package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/bench"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
)

// pressureCluster is a server with 17 slots for ordinary roles, an agent
// database migrated for the daemon's role, and the roles agent, daemon and
// hog (another client of the server).
func pressureCluster(t *testing.T) (cluster *pgcluster.Cluster, admin *sqlx.DB, url func(role string) string) {
	t.Helper()
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{MaxConnections: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	pg, err := sqlx.Open("postgres", cluster.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, q := range []string{`CREATE DATABASE agent`, `CREATE ROLE agent LOGIN`, `CREATE ROLE daemon LOGIN`, `CREATE ROLE hog LOGIN`} {
		if _, err := pg.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	admin, err = sqlx.Open("postgres", cluster.URL("agent"))
	if err != nil {
		t.Fatal(err)
	}
	admin.SetMaxOpenConns(1) // one superuser session, counted like any other
	t.Cleanup(func() { admin.Close() })
	if _, err := schema.Migrate(ctx, admin, schema.ReferencePlan(), schema.Options{Reference: true, Grant: "daemon"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`GRANT ALL ON ALL TABLES IN SCHEMA public TO agent`, `GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO agent`} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return cluster, admin, func(role string) string {
		return strings.Replace(cluster.URL("agent"), "user=postgres", "user="+role, 1)
	}
}

// hogger is another client of the server that takes every slot beyond keep
// free ones as soon as it sees them, and lets them all go at release.
type hogger struct {
	db   *sqlx.DB
	mu   sync.Mutex
	held []*sqlx.Conn
}

func (h *hogger) topUp(ctx context.Context, admin *sqlx.DB, keep int) error {
	free, err := store.FreeConnections(ctx, admin)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ; free > keep; free-- {
		c, err := h.db.Connx(ctx)
		if err != nil {
			return nil // someone else took it first
		}
		h.held = append(h.held, c)
	}
	return nil
}

func (h *hogger) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.held {
		c.Close()
	}
	h.held = nil
}

var (
	slotsFree       = regexp.MustCompile(`(?m)^supersessiond_connection_slots_free (\S+)$`)
	connectionWaits = regexp.MustCompile(`(?m)^supersessiond_connection_waits_total\{[^}]*\} (\S+)$`)
)

// metric reads one sample of a daemon's /metrics ("" when absent).
func (p *proc) metric(re *regexp.Regexp) string {
	_, body := p.get("/metrics")
	if m := re.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return ""
}

// Connection pressure, with the real binary. Three daemons run beside an
// agent that opens a connection for every write, while another client of
// the server takes every slot but three: the two the daemons must leave
// free (MinFreeConnections) and one for the agent's own churn. The agent
// inserts and classifies contradicting attributes all along, and every one
// of its writes succeeds: the daemons wait for room instead of taking the
// agent's slots. No decision is lost: once the pressure ends the daemons
// catch up, every pair is decided, and a full dry run afterwards proposes
// nothing. Issue 29: with 9 ordinary slots three daemons held 7 and a third
// of the agent's writes failed, and the decisions a busy server refused
// were skipped.
func TestConnectionPressureLeavesTheAgentItsSlotsAndLosesNoDecision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, admin, url := pressureCluster(t)
	s := memtest.New(t, admin)
	s.Moves("base", "b", 20, "Toronto", "Vancouver")
	// A compaction backlog and a slow LLM keep the daemons wanting
	// connections all along, as a busy stack does.
	if _, _, _, err := bench.InsertCompactionBacklog(ctx, admin, bench.CompactionBacklog{Events: 2000}); err != nil {
		t.Fatal(err)
	}
	llmSrv := httptest.NewServer(bench.CompactionLLM(50 * time.Millisecond))
	defer llmSrv.Close()

	// Each daemon keeps one idle connection between uses: under pressure it
	// has to open the others it wants, and that is what the guard decides.
	cfg := "  database:\n    maxIdleConns: 1\n" +
		"  schedules:\n    sweep: \"@every 1s\"\n    compactionRetry: \"@every 1s\"\n    tombstones: \"off\"\n" +
		"  inlineHook:\n    pollInterval: 200ms\n  log:\n    level: info\n" +
		"  llm:\n    endpoint: " + llmSrv.URL + "/v1\n    model: m\n    maxConcurrency: 4\n"
	procs := []*proc{start(t, url("daemon"), cfg), start(t, url("daemon"), cfg), start(t, url("daemon"), cfg)}
	eventually(t, 60*time.Second, "the first full pass", func() bool {
		return s.Count(`SELECT count(*) FROM entity_attributes WHERE status = 'superseded'`) == 20
	}, procs...)

	hogDB, err := sqlx.Open("postgres", url("hog"))
	if err != nil {
		t.Fatal(err)
	}
	defer hogDB.Close()
	hog := &hogger{db: hogDB}
	defer hog.release()
	// The daemons must leave two slots free (MinFreeConnections, the
	// default); the other client leaves one more, for the agent's own churn:
	// a connection it closed holds its slot until its backend has exited.
	const keep = 3
	stop := make(chan struct{})
	var hogWG sync.WaitGroup
	hogWG.Go(func() {
		for {
			if err := hog.topUp(ctx, admin, keep); err != nil {
				t.Errorf("pressure: %v", err)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		hogWG.Wait()
	}()
	// The pressure is in place once both daemons' guards have seen it and
	// what they had under way is done: each holds its idle connection and
	// its LISTEN connection, no more.
	eventually(t, 30*time.Second, "both daemons to see the server crowded", func() bool {
		for _, p := range procs {
			v, err := strconv.ParseFloat(p.metric(slotsFree), 64)
			if err != nil || v > keep {
				return false
			}
		}
		return s.Count(`SELECT count(*) FROM pg_stat_activity WHERE usename = 'daemon'`) <= 2*len(procs)
	}, procs...)
	if n := s.Count(`SELECT count(*) FROM compaction_events WHERE status = 'pending'`); n == 0 {
		t.Fatal("the compaction backlog is done before the pressure: the daemons would want no connection, and the test proves nothing")
	}

	// The agent: a connection per write, as the agent did, a write
	// every few milliseconds.
	agentDB, err := sqlx.Open("postgres", url("agent"))
	if err != nil {
		t.Fatal(err)
	}
	defer agentDB.Close()
	agentDB.SetMaxIdleConns(0)
	var written, failed atomic.Int64
	write := func(q string, args ...any) {
		if _, err := agentDB.ExecContext(ctx, q, args...); err != nil {
			failed.Add(1)
			t.Logf("agent write failed: %v", err)
			return
		}
		written.Add(1)
		time.Sleep(5 * time.Millisecond)
	}
	const pairs = 60
	for i := range pairs {
		ent, asp := fmt.Sprintf("w:e%02d", i), fmt.Sprintf("w:e%02d:home", i)
		write(`INSERT INTO entities (id, agent_id, name) VALUES ($1, 'w', $1)`, ent)
		write(`INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name) VALUES ($1, $2, 'w', 'home', 'home')`, asp, ent)
		write(`INSERT INTO entity_attributes (id, agent_id, kind, content, normalized_content, created_at)
			VALUES ($1, 'w', 'attribute', 'Lives in Lima', 'lives in lima', now() - interval '30 days')`, fmt.Sprintf("w%02d-old", i))
		write(`INSERT INTO entity_attributes (id, agent_id, kind, content, normalized_content)
			VALUES ($1, 'w', 'attribute', 'Lives in Quito', 'lives in quito')`, fmt.Sprintf("w%02d-new", i))
		write(`UPDATE entity_attributes SET aspect_id = $1 WHERE id IN ($2, $3)`, asp, fmt.Sprintf("w%02d-old", i), fmt.Sprintf("w%02d-new", i))
	}
	waits := 0.0
	for _, p := range procs {
		_, body := p.get("/metrics")
		for _, m := range connectionWaits.FindAllStringSubmatch(body, -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			waits += v
		}
	}
	close(stop)
	hogWG.Wait()
	hog.release()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d agent writes failed while the daemons ran under pressure", failed.Load(), failed.Load()+written.Load())
	}
	if waits == 0 {
		t.Fatal("no daemon ever waited for a connection slot: the pressure did not reach them, and the test proves nothing")
	}

	eventually(t, 120*time.Second, "the daemons to catch up", func() bool {
		return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 &&
			s.Count(`SELECT count(*) FROM supersessiond.changes`) == 0 &&
			s.Count(`SELECT count(*) FROM entity_attributes WHERE agent_id = 'w' AND status = 'superseded'`) == pairs
	}, procs...)
	for _, p := range procs {
		p.stop()
	}
	out, err := cli(t, url("daemon"), "sweep", "--once", "--full", "--dry-run", "--json")
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	var rep struct {
		Complete bool              `json:"complete"`
		Planned  []json.RawMessage `json:"planned"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &rep); err != nil {
		t.Fatalf("dry run report: %v\n%s", err, out)
	}
	if !rep.Complete || len(rep.Planned) > 0 {
		t.Fatalf("after the pressure a full dry run proposes %d decisions (complete %v): decisions were lost\n%s", len(rep.Planned), rep.Complete, out)
	}
	t.Logf("%d agent writes under pressure, none failed; %d pairs decided once the pressure ended", written.Load(), pairs)
}
