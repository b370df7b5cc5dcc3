// Package scale measures the hooks with a fleet of Rds objects in steady state: N objects, each its
// own /sync request over a real loopback listener, through the real SDK against the simulator over
// HTTP. It prints one table row per N beside a floor: a gin handler that only decodes and re-encodes
// the same hook JSON, measured in the same run in interleaved rounds.
//
// The normal test run does a smoke run with N=20 that asserts the table is produced, never a time.
// `make bench-scale` runs N=100,1000,10000 (SCALE_N sets the sizes, SCALE_ROUNDS the rounds).
package scale

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	standin "github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

// Settings of a run. The resyncs are the hooks' own: pending short enough that Ready follows ACTIVE
// within 5 s, steady at the default 5 minutes.
const (
	defaultRounds = 9               // interleaved hooks/floor rounds (SCALE_ROUNDS); the table shows the medians
	createTime    = 3 * time.Second // how long the simulator keeps a new instance in BUILD
	resyncPending = 4 * time.Second
	resyncSteady  = 5 * time.Minute
	transitions   = 3 // objects taken through create to measure ACTIVE -> Ready
)

// row is one line of the table.
type row struct {
	n                        int
	callsPerSync             float64
	calls, syncs             int
	hookP50, hookP99         time.Duration
	floorP50, floorP99       time.Duration
	hookRPS, floorRPS        float64
	rpsRatio                 float64 // the median of the rounds' hook/floor ratios
	hookCPU, floorCPU        time.Duration
	readyLag                 time.Duration // worst over the transitions
	steadyResync             float64       // seconds, as the steady answers ask
	rssMiB, heapMiB          float64
	setup, measured, elapsed time.Duration
}

// TestMain serves the floor handler when the test binary is started as the floor's process
// (SCALE_ROLE=floor), so that the floor runs in a process of its own as rds-hooks does.
func TestMain(m *testing.M) {
	if os.Getenv("SCALE_ROLE") == "floor" {
		os.Exit(serveFloor())
	}
	os.Exit(m.Run())
}

// serveFloor serves the floor on a loopback port until SIGTERM, logging its address as rds-hooks does.
func serveFloor() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv := &http.Server{Handler: floorHandler(), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		<-sig
		_ = srv.Close()
	}()
	out, _ := json.Marshal(map[string]string{"msg": "floor listening", "addr": l.Addr().String()})
	fmt.Println(string(out))
	_ = srv.Serve(l)
	return 0
}

func TestScale(t *testing.T) {
	sizes := []int{20}
	if s := os.Getenv("SCALE_N"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(t, err, "SCALE_N is a comma-separated list of sizes")
			sizes = append(sizes, n)
		}
	}
	conc := 4
	if s := os.Getenv("SCALE_CONCURRENCY"); s != "" {
		var err error
		conc, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		if binary != "" {
			_ = os.RemoveAll(filepath.Dir(binary))
		}
	})
	var rows []row
	for _, n := range sizes {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			r := runScale(t, n, conc)
			rows = append(rows, r)
			t.Logf("N=%d done in %s (setup %s, measured %s)", n, r.elapsed.Round(time.Second), r.setup.Round(time.Second), r.measured.Round(time.Second))
		})
	}
	require.Len(t, rows, len(sizes))
	table := formatTable(rows, conc)
	fmt.Fprint(os.Stdout, table)
	require.Contains(t, table, "| OTC calls/sync")
	for _, r := range rows {
		// What a working run must show, whatever the machine's speed.
		require.Positive(t, r.hookRPS)
		require.Positive(t, r.floorRPS)
		require.Equal(t, resyncSteady.Seconds(), r.steadyResync)
		require.Positive(t, r.readyLag)
	}
}

func formatTable(rows []row, conc int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nscale: %d interleaved rounds (median; the throughput ratio is the median of the rounds' ratios), %d concurrent requests, GOMAXPROCS=%d, rds-hooks %s\n\n",
		rounds(), conc, runtime.GOMAXPROCS(0), strings.Join(hooksArgs(), " "))
	b.WriteString("| N | OTC calls/sync | hook p50 | hook p99 | floor p50 | floor p99 | p99 ratio | hook req/s | floor req/s | throughput ratio | hook CPU/sync | floor CPU/sync | ACTIVE->Ready | RSS MiB | heap MiB |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %.4f (%d/%d) | %s | %s | %s | %s | %.2fx | %.0f | %.0f | %.2fx | %s | %s | %s | %.1f | %.1f |\n",
			r.n, r.callsPerSync, r.calls, r.syncs, ms(r.hookP50), ms(r.hookP99), ms(r.floorP50), ms(r.floorP99),
			float64(r.hookP99)/float64(r.floorP99), r.hookRPS, r.floorRPS, r.rpsRatio, us(r.hookCPU), us(r.floorCPU),
			r.readyLag.Round(10*time.Millisecond), r.rssMiB, r.heapMiB)
	}
	return b.String()
}

// us is a CPU time per request in microseconds; "-" when the system did not say.
func us(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// bench is one run: the simulator, the hooks and the floor, each on its own loopback listener.
type bench struct {
	t      testing.TB
	sim    *otcsim.Sim
	hooks  string // base URL of the rds-hooks process
	pid    int    // its process id
	floor  string
	fpid   int // the floor's process id
	client *http.Client
	sample map[string]any
}

func runScale(t *testing.T, n, conc int) row {
	start := time.Now()
	b := newBench(t, conc)

	// Setup: every object created through the hooks, fed back until it is steady.
	objs := make([]*object, n)
	for i := range objs {
		objs[i] = b.newObject(fmt.Sprintf("db-%05d", i))
	}
	b.settle(objs, conc)
	setup := time.Since(start)
	// The objects were all created just now, and the hooks read an instance that changed in the
	// last 30 s fresh (docs/view.md): a fleet in steady state has not changed for longer. The smoke
	// run does not wait.
	if os.Getenv("SCALE_N") != "" {
		time.Sleep(view.DefaultSettle + time.Second)
	}

	bodies := make([][]byte, n)
	for i, o := range objs {
		bodies[i] = o.envelope(b)
	}
	// Warm both handlers (connections, the hooks' caches) before measuring.
	b.round(b.hooks, b.pid, bodies, conc)
	b.round(b.floor, b.fpid, bodies, conc)

	measureStart := time.Now()
	b.sim.ResetCounters()
	var hook, floor []roundResult
	for i := range rounds() {
		hook = append(hook, b.round(b.hooks, b.pid, bodies, conc))
		floor = append(floor, b.round(b.floor, b.fpid, bodies, conc))
		h, f := hook[i], floor[i]
		t.Logf("N=%d round %d: hooks %.0f req/s %s/sync, floor %.0f req/s %s/sync, ratio %.2fx", n, i+1, h.rps, us(h.cpu), f.rps, us(f.cpu), h.rps/f.rps)
	}
	calls := 0
	for _, c := range b.sim.CallCounts() {
		calls += c
	}
	measured := time.Since(measureStart)

	// Every steady answer asks to be called again at the steady pace.
	resync := b.steadyResync(objs[0])
	rss, heap := memory(b)

	// An object in transition while the fleet is steady: ACTIVE in OTC -> Ready in the answer.
	lags := make([]time.Duration, transitions)
	// Each one's calls late by a different part of the pending resync (as a busy Metacontroller
	// queue would), so that OTC turns ACTIVE at different points between two calls.
	parallel(transitions, transitions, func(i int) {
		lags[i] = b.readyLag(fmt.Sprintf("transit-%05d-%d", n, i), time.Duration(i)*resyncPending/transitions)
	})
	lag := slices.Max(lags)

	return row{
		n:            n,
		callsPerSync: float64(calls) / float64(rounds()*n),
		calls:        calls,
		syncs:        rounds() * n,
		hookP50:      median(hook, func(r roundResult) float64 { return float64(r.p50) }).dur(),
		hookP99:      median(hook, func(r roundResult) float64 { return float64(r.p99) }).dur(),
		floorP50:     median(floor, func(r roundResult) float64 { return float64(r.p50) }).dur(),
		floorP99:     median(floor, func(r roundResult) float64 { return float64(r.p99) }).dur(),
		hookRPS:      float64(median(hook, func(r roundResult) float64 { return r.rps })),
		floorRPS:     float64(median(floor, func(r roundResult) float64 { return r.rps })),
		rpsRatio:     ratioOfRounds(hook, floor),
		hookCPU:      median(hook, func(r roundResult) float64 { return float64(r.cpu) }).dur(),
		floorCPU:     median(floor, func(r roundResult) float64 { return float64(r.cpu) }).dur(),
		readyLag:     lag,
		steadyResync: resync,
		rssMiB:       rss,
		heapMiB:      heap,
		setup:        setup,
		measured:     measured,
		elapsed:      time.Since(start),
	}
}

type num float64

func (v num) dur() time.Duration { return time.Duration(v) }

// ratioOfRounds is the median over the rounds of the hooks' throughput divided by the floor's in
// the round right after: each pair ran seconds apart, so that a change in what else the machine
// runs moves both sides of a ratio, and the median drops the rounds a listing or a neighbour
// slowed.
func ratioOfRounds(hook, floor []roundResult) float64 {
	rs := make([]float64, len(hook))
	for i := range hook {
		rs[i] = hook[i].rps / floor[i].rps
	}
	slices.Sort(rs)
	return rs[len(rs)/2]
}

// rounds is the number of interleaved rounds: SCALE_ROUNDS, else defaultRounds.
func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("SCALE_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return defaultRounds
}

func median(rs []roundResult, f func(roundResult) float64) num {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	slices.Sort(vs)
	return num(vs[len(vs)/2])
}

func newBench(t *testing.T, conc int) *bench {
	t.Helper()
	srv := otcsim.NewServer(otcsim.Options{Durations: otcsim.Durations{Create: createTime}, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(srv.Close)
	hooks, pid := startHooks(t, srv.Env())
	floor, fpid := startProcess(t, exec.Command(os.Args[0]), map[string]string{"SCALE_ROLE": "floor"})

	var sample map[string]any
	require.NoError(t, json.Unmarshal([]byte(testdata.SampleRds), &sample))
	// The login above is not a sync's call: count from here.
	srv.Sim.ResetCounters()

	return &bench{
		t:     t,
		sim:   srv.Sim,
		hooks: hooks,
		pid:   pid,
		floor: floor,
		fpid:  fpid,
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc * 2, IdleConnTimeout: time.Minute,
		}, Timeout: 30 * time.Second},
		sample: sample,
	}
}

// hooksArgs are the flags of rds-hooks that shape the run: the resyncs, and SCALE_HOOKS_FLAGS
// (e.g. "--view-max-age=0" to measure without the shared view).
func hooksArgs() []string {
	return append([]string{"--resync-pending=" + resyncPending.String(), "--resync-steady=" + resyncSteady.String()},
		strings.Fields(os.Getenv("SCALE_HOOKS_FLAGS"))...)
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// startHooks runs the rds-hooks program, built from this tree, logged in to the simulator with the
// OS_* variables as in production, and returns its URL and process id (for its RSS).
func startHooks(t *testing.T, env map[string]string) (string, int) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rds-scale-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "rds-hooks")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/mcsps/rds-lambda-controller/cmd/rds-hooks").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	require.NoError(t, buildErr)

	// NOTE: plain HTTP without a token, as the floor is served: the table compares the work of a
	// call, not TLS (the hooks' authentication costs one header check; TLS the handshake of a new
	// connection, which Metacontroller keeps open).
	return startProcess(t, exec.Command(binary, append([]string{"--listen", "127.0.0.1:0", "--logs-listen", "127.0.0.1:0", "--cluster-id", "scale",
		"--password-key", "scale-benchmark-password-key", "--insecure-no-auth"}, hooksArgs()...)...), env)
}

// startProcess starts cmd with env on top of this process's environment (less its OS_* and
// RDS_HOOKS_* variables) and returns the address its log says it listens on, and its pid.
func startProcess(t *testing.T, cmd *exec.Cmd, env map[string]string) (string, int) {
	t.Helper()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OS_") && !strings.HasPrefix(kv, "RDS_HOOKS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	// The JSON log says where it listens; the rest of the log is drained.
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		var entry struct{ Msg, Addr string }
		if json.Unmarshal(lines.Bytes(), &entry) == nil && strings.HasSuffix(entry.Msg, " listening") {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return "http://" + entry.Addr, cmd.Process.Pid
		}
	}
	t.Fatalf("%s exited before listening: %v", cmd.Path, lines.Err())
	return "", 0
}

// floorHandler is the least any hook must do: decode the request and encode an answer of the same
// shape (the status as observed, the observed Secrets as children).
func floorHandler() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.POST("/sync", func(c *gin.Context) {
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			c.AbortWithStatus(http.StatusBadRequest)
			return
		}
		req, err := hook.DecodeRequest(body)
		if err != nil {
			c.AbortWithStatus(http.StatusBadRequest)
			return
		}
		children := make([]any, 0, len(req.Secrets))
		for _, s := range req.Secrets {
			children = append(children, s)
		}
		out, err := json.Marshal(hook.SyncResponse{Status: &req.Parent.Status, Children: children, ResyncAfterSeconds: resyncSteady.Seconds()})
		if err != nil {
			c.AbortWithStatus(http.StatusInternalServerError)
			return
		}
		c.Data(http.StatusOK, "application/json", out)
	})
	return e
}

// object is one Rds object as Metacontroller and the cluster hold it (test/metacontroller), with
// what its last answer said.
type object struct {
	mc     *standin.Object
	resync float64
	ready  bool
	status v1alpha1.RdsStatus
}

func (b *bench) newObject(name string) *object {
	parent := map[string]any{}
	for k, v := range b.sample {
		parent[k] = v
	}
	parent["metadata"] = map[string]any{
		"name": name, "namespace": "scale", "uid": "scale-" + name,
		"generation": 1, "resourceVersion": "1",
		"finalizers": []any{standin.Finalizer},
	}
	return &object{mc: standin.New(parent)}
}

func (o *object) envelope(b *bench) []byte {
	out, err := o.mc.Body()
	require.NoError(b.t, err)
	return out
}

// sync sends one /sync for o and applies the answer as Metacontroller does.
func (b *bench) sync(o *object) {
	code, body := b.post(b.hooks, o.envelope(b))
	require.Equal(b.t, http.StatusOK, code, string(body))
	resp, err := standin.Decode(body)
	require.NoError(b.t, err)
	require.NoError(b.t, o.mc.Apply(resp))
	o.status = resp.Status
	o.resync = resp.ResyncAfterSeconds
	o.ready = false
	for _, c := range o.status.Conditions {
		if c.Type == v1alpha1.ConditionReady && c.Status == "True" {
			o.ready = true
		}
	}
}

func (b *bench) post(url string, body []byte) (int, []byte) {
	resp, err := b.client.Post(url+"/sync", "application/json", bytes.NewReader(body))
	require.NoError(b.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return resp.StatusCode, out
}

// settle drives every object until it is Ready and asks for the steady resync, calling each object
// again once its asked resync has passed (or at once, for the short Secret step).
func (b *bench) settle(objs []*object, conc int) {
	deadline := time.Now().Add(2*time.Minute + time.Duration(len(objs))*20*time.Millisecond)
	for {
		var todo []*object
		for _, o := range objs {
			if !o.ready || o.resync != resyncSteady.Seconds() {
				todo = append(todo, o)
			}
		}
		if len(todo) == 0 {
			return
		}
		require.True(b.t, time.Now().Before(deadline), "%d of %d objects did not become steady; first: %+v", len(todo), len(objs), todo[0].status)
		parallel(len(todo), conc, func(i int) { b.sync(todo[i]) })
		if slices.ContainsFunc(objs, func(o *object) bool { return o.status.Status == cloud.StatusBuild }) {
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// steadyResync checks that a steady object's answer is the same as the last and returns its resync.
func (b *bench) steadyResync(o *object) float64 {
	before := o.envelope(b)
	b.sync(o)
	require.JSONEq(b.t, string(before), string(o.envelope(b)), "a steady sync changed the object")
	return o.resync
}

// readyLag takes a new object through create as Metacontroller would (calling again after the
// asked resync, once late by `late`) and returns how long after OTC reported ACTIVE the answer
// said Ready.
func (b *bench) readyLag(name string, late time.Duration) time.Duration {
	o := b.newObject(name)
	delayed := false
	var active time.Time
	deadline := time.Now().Add(time.Minute)
	for !o.ready {
		require.True(b.t, time.Now().Before(deadline), "%s did not become Ready: %+v", name, o.status)
		b.sync(o)
		if o.ready {
			break
		}
		// Metacontroller calls again after resyncAfterSeconds; meanwhile watch OTC for ACTIVE.
		next := time.Now().Add(time.Duration(o.resync * float64(time.Second)))
		if o.status.Operation != nil && !delayed {
			next, delayed = next.Add(late), true
		}
		for time.Now().Before(next) {
			if active.IsZero() && o.status.ID != "" {
				if in, ok := b.sim.Instance(o.status.ID); ok && in.Status == cloud.StatusActive {
					active = time.Now()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	require.False(b.t, active.IsZero(), "ACTIVE was never seen before Ready")
	return time.Since(active)
}

type roundResult struct {
	p50, p99 time.Duration
	rps      float64
	cpu      time.Duration // the server's CPU time per request; 0 when the system does not say
}

// round posts every body once with conc requests at a time and returns latency and throughput.
func (b *bench) round(url string, pid int, bodies [][]byte, conc int) roundResult {
	lat := make([]time.Duration, len(bodies))
	var failed atomic.Int64
	// NOTE: this process collects its garbage before the round, not in it. A collection of its
	// heap (the objects, their bodies, the simulator) took about 250 ms of the CPU the servers
	// share, and fell into the hooks' round or the floor's, which swung a round's ratio by 0.15.
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	cpu0 := cpuTime(pid)
	start := time.Now()
	parallel(len(bodies), conc, func(i int) {
		t0 := time.Now()
		resp, err := b.client.Post(url+"/sync", "application/json", bytes.NewReader(bodies[i]))
		if err != nil {
			failed.Add(1)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat[i] = time.Since(t0)
		if resp.StatusCode != http.StatusOK {
			failed.Add(1)
		}
	})
	elapsed := time.Since(start)
	cpu := cpuTime(pid) - cpu0
	require.Zero(b.t, failed.Load(), "requests to %s failed", url)
	slices.Sort(lat)
	return roundResult{
		p50: lat[len(lat)*50/100],
		p99: lat[min(len(lat)-1, len(lat)*99/100)],
		rps: float64(len(bodies)) / elapsed.Seconds(),
		cpu: cpu / time.Duration(len(bodies)),
	}
}

// cpuTime is the CPU time the process pid has run so far, from the kernel's scheduler statistics
// of each of its threads (nanoseconds, unlike the clock ticks of /proc/PID/stat); 0 when they
// cannot be read. A thread that ended between two readings is missed: Go's runtime keeps its
// threads.
func cpuTime(pid int) time.Duration {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, task := range tasks {
		data, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// parallel runs f(0..n-1) on conc goroutines.
func parallel(n, conc int, f func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// memory returns the rds-hooks process's resident set (VmRSS) and its Go heap in use
// (go_memstats_heap_inuse_bytes from its /metrics), in MiB.
func memory(b *bench) (rss, heap float64) {
	if resp, err := b.client.Get(b.hooks + "/metrics"); err == nil {
		text, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(text), "\n") {
			if v, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				heap = f / (1 << 20)
			}
		}
	}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.pid)); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				rss = kb / 1024
			}
		}
	}
	return rss, heap
}
