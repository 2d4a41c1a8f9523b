package faults_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

const adminToken = "faults-admin-token-5c1e8a"

// flood is many clients asking the console at once, each again as soon as
// it has its answer, until stopped.
type flood struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	codes sync.Map // status code → *atomic.Int64
	leak  atomic.Value
}

func (f *flood) count(code int) {
	n, _ := f.codes.LoadOrStore(code, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

func (f *flood) n(code int) int64 {
	if n, ok := f.codes.Load(code); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// startFlood starts clients GETs at once against the console and API of
// port, half of them with the token. An answer without the token that
// holds memory (secret) is recorded as a leak.
func startFlood(port, clients int, secret string) *flood {
	f := &flood{stop: make(chan struct{})}
	tr := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	paths := []string{"/api/proposals", "/api/history?limit=200", "/api/stats", "/ui/", "/ui/stats", "/api/proposals/counts"}
	for i := range clients {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for k := 0; ; k++ {
				select {
				case <-f.stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", port, paths[(i+k)%len(paths)]), nil)
				authed := i%2 == 0
				if authed {
					req.Header.Set("Authorization", "Bearer "+adminToken)
				}
				res, err := client.Do(req)
				if err != nil {
					f.count(0)
					continue
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				f.count(res.StatusCode)
				if !authed && strings.Contains(string(body), secret) {
					f.leak.Store(req.URL.Path + ": " + string(body))
				}
			}
		}()
	}
	return f
}

func (f *flood) end() {
	close(f.stop)
	f.wg.Wait()
}

// A read flood: 1,000 clients asking the console and API at once, with the
// token and without, while the agent classifies attributes. /readyz keeps
// answering ready (the database never reported unreachable), the inline
// hook decides every classification, and no answer without the token holds
// the agent's memory: the console's readers wait on their own small pool
// and concurrency limit, never on the connections the jobs, the watchdog
// and /readyz use.
func TestReadFloodLeavesTheDaemonHealthy(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	const pairs = 20
	olds := make([]string, pairs)
	aspects := make([]string, pairs)
	for i := range pairs {
		aspects[i] = s.Aspect("a", fmt.Sprintf("person%d", i), "home")
		olds[i] = fmt.Sprintf("old%d", i)
		s.Add(memtest.Attr{ID: olds[i], Agent: "a", Aspect: aspects[i], Content: "Lives in Reykjavik"},
			memtest.Attr{ID: fmt.Sprintf("new%d", i), Agent: "a", Content: "Lives in Nairobi"})
	}
	p := start(t, db.URL, "  schedules:\n    sweep: \"off\"\n    compactionRetry: \"off\"\n    tombstones: \"off\"\n",
		"SUPERSESSIOND_ADMIN_TOKEN="+adminToken)

	var readyErrs []string
	var readyMu sync.Mutex
	probes := atomic.Int64{}
	stopProbe := make(chan struct{})
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		c := http.Client{Timeout: 2 * time.Minute}
		for {
			select {
			case <-stopProbe:
				return
			default:
			}
			res, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", p.port))
			if err != nil {
				readyMu.Lock()
				readyErrs = append(readyErrs, err.Error())
				readyMu.Unlock()
				continue
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			probes.Add(1)
			if res.StatusCode != 200 {
				readyMu.Lock()
				readyErrs = append(readyErrs, fmt.Sprintf("%d %s", res.StatusCode, body))
				readyMu.Unlock()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	// The decisions land in history: an answer without the token must
	// never show them.
	f := startFlood(p.port, 1000, "Reykjavik")
	// Let the flood build up before the agent classifies.
	eventually(t, 2*time.Minute, "the flood to be answered", func() bool { return f.n(200)+f.n(403)+f.n(503) > 500 }, p)
	for i := range pairs {
		s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = $2`, aspects[i], fmt.Sprintf("new%d", i))
	}
	eventually(t, 3*time.Minute, "the inline hook to decide every classification during the flood", func() bool {
		return s.Count(`SELECT count(*) FROM entity_attributes WHERE id = ANY($1) AND status = 'superseded'`, pqArray(olds)) == pairs
	}, p)
	answeredBefore := f.n(200) + f.n(403) + f.n(503)
	eventually(t, 2*time.Minute, "the flood to go on after the decisions", func() bool {
		return f.n(200)+f.n(403)+f.n(503) > answeredBefore+1000
	}, p)
	f.end()
	close(stopProbe)
	<-probed

	t.Logf("flood answers: 200=%d 403=%d 503=%d errors=%d; /readyz probes %d", f.n(200), f.n(403), f.n(503), f.n(0), probes.Load())
	if leak := f.leak.Load(); leak != nil {
		t.Errorf("an answer without the token held the agent's memory: %s", leak)
	}
	if f.n(0) > 0 {
		t.Errorf("%d flood requests got no answer at all", f.n(0))
	}
	readyMu.Lock()
	defer readyMu.Unlock()
	if len(readyErrs) > 0 {
		t.Errorf("/readyz was not ready %d times during the flood, first: %s", len(readyErrs), readyErrs[0])
	}
	if probes.Load() == 0 {
		t.Error("/readyz was never answered")
	}
	if f.n(200) == 0 || f.n(403) == 0 {
		t.Errorf("the flood must be served with the token and refused without it: 200=%d 403=%d", f.n(200), f.n(403))
	}
	p.stop()
	if logs := p.logs.String(); strings.Contains(logs, "database unreachable") {
		t.Errorf("the daemon found its database unreachable during the flood:\n%s", logs)
	}
}

func pqArray(ids []string) string { return "{" + strings.Join(ids, ",") + "}" }

// DNS rebinding: a web page of attacker.example whose name now resolves to
// the listener sends Host: attacker.example and no token. It reads nothing,
// neither by default nor with openReadsOnLoopback (which opens reads only to
// a Host naming the listener itself).
func TestRebindingRequestReadsNothing(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "user", "partner")
	s.Add(memtest.Attr{ID: "p1", Agent: "a", Aspect: asp, Content: "Dates Quillon Marchetti"},
		memtest.Attr{ID: "p2", Agent: "a", Aspect: asp, Content: "No longer dates Quillon Marchetti"})
	sweep := exec.Command(binary, "sweep", "--once")
	sweep.Env = append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+db.URL, "SUPERSESSIOND_MEMORY__PIPELINEV2__SHADOWMODE=true")
	if out, err := sweep.CombinedOutput(); err != nil {
		t.Fatalf("shadow sweep: %v\n%s", err, out)
	}
	var proposal string
	if err := db.Get(&proposal, `SELECT id FROM memory_history WHERE event = 'supersession_proposal' LIMIT 1`); err != nil {
		t.Fatalf("no proposal to read: %v", err)
	}
	paths := []string{"/api/proposals", "/api/history", "/api/stats", "/api/proposals/counts", "/ui/", "/ui/stats",
		"/api/proposals/" + proposal, "/ui/proposals/" + proposal}
	for _, open := range []bool{false, true} {
		cfg := "" // the default
		if open {
			cfg = "    openReadsOnLoopback: true\n"
		}
		p := start(t, db.URL, cfg, "SUPERSESSIOND_ADMIN_TOKEN="+adminToken)
		for _, path := range paths {
			code, body := rebound(t, p.port, path, fmt.Sprintf("attacker.example:%d", p.port))
			if strings.Contains(body, "Quillon") || strings.Contains(body, "p1") && strings.Contains(body, "p2") {
				t.Errorf("openReadsOnLoopback %t: GET %s with Host attacker.example read memory (%d):\n%s", open, path, code, body)
			}
			if code == 200 {
				t.Errorf("openReadsOnLoopback %t: GET %s with Host attacker.example: 200", open, path)
			}
		}
		// The same request naming the listener reads, when reads are open:
		// the check above would have seen the memory.
		if code, body := rebound(t, p.port, "/api/history", fmt.Sprintf("127.0.0.1:%d", p.port)); open && (code != 200 || !strings.Contains(body, "Quillon")) {
			t.Errorf("a read naming the listener, reads open: %d", code)
		}
		p.stop()
	}
}

// rebound GETs path from the listener with the given Host header and no
// token, as a rebinding page's script would.
func rebound(t *testing.T, port int, path, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	c := http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
