package benchmarks

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kpipe/kpipe"
	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/cache/badger"
	"github.com/kpipe/kpipe/cache/remote/remotetest"
	"github.com/kpipe/kpipe/cache/server/servertest"
	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/internal/procstat"
)

// The measurements of issue 38 (`kpipe cache serve`, the Badger store),
// each behind a flag; each prints a Markdown table (RESULTS.md):
//
//	go test ./benchmarks -run TestServeRunnersBench -kpipe.servebench -v -timeout 60m
//	go test ./benchmarks -run TestServeStartupBench -kpipe.startupbench -v -timeout 60m
//	go test ./benchmarks -run TestServeMaxSizeBench -kpipe.servebench -v -timeout 60m
//	go test ./benchmarks -run TestEmbedderStoreBench -kpipe.embedbench -v -timeout 60m
var (
	serveBench   = flag.Bool("kpipe.servebench", false, "run TestServeRunnersBench and TestServeMaxSizeBench")
	startupBench = flag.Bool("kpipe.startupbench", false, "run TestServeStartupBench (writes 1,000,000 entries)")
	startupN     = flag.Int("kpipe.startupn", 1_000_000, "entries of the big store in TestServeStartupBench")
	embedBench   = flag.Bool("kpipe.embedbench", false, "run TestEmbedderStoreBench")
	embedApps    = flag.Int("kpipe.embedapps", 2500, "apps (x4 roots) in TestEmbedderStoreBench")
)

// buildKpipe builds cmd/kpipe into dir, and cmd/kpipe-cache-server
// beside it (`kpipe cache serve` hands over to it).
func buildKpipe(t *testing.T, dir string) string {
	t.Helper()
	for _, name := range []string{"kpipe-cache-server", "kpipe"} {
		// As plain `go build` builds them, reusing what go test compiled.
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../cmd/"+name)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	return filepath.Join(dir, "kpipe")
}

// serveProc is a `kpipe cache serve` process.
type serveProc struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	log  *bytes.Buffer
}

// startServeProc starts the server and returns once it answers /healthz,
// with the time that took from the exec.
func startServeProc(t *testing.T, bin, dir string, extra ...string) (*serveProc, time.Duration) {
	t.Helper()
	args := append([]string{"cache", "serve", "--dir", dir, "--listen", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	pr, pw := io.Pipe()
	p := &serveProc{cmd: cmd, done: make(chan struct{}), log: &bytes.Buffer{}}
	cmd.Stderr = pw
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); pw.Close(); close(p.done) }()
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.log.WriteString(sc.Text() + "\n")
			if _, rest, ok := strings.Cut(sc.Text(), " on http://"); ok {
				addr, _, _ := strings.Cut(rest, ";")
				urlc <- "http://" + addr
			}
		}
	}()
	select {
	case p.url = <-urlc:
	case <-p.done:
		t.Fatalf("kpipe cache serve exited: %s", p.log)
	case <-time.After(5 * time.Minute):
		t.Fatal("kpipe cache serve did not start")
	}
	c := http.Client{Timeout: time.Second}
	for {
		resp, err := c.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		time.Sleep(time.Millisecond)
	}
	return p, time.Since(t0)
}

func (p *serveProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
}

func (p *serveProc) metric(t *testing.T, name string) float64 {
	if v, ok := servertest.Metric(t, p.url, name); ok {
		return v
	}
	return -1
}

// rssTree is the resident memory of pid and its descendants, in bytes,
// from /proc (0 elsewhere): VmRSS now, and the largest VmHWM (peak) of
// any one of them.
func rssTree(pid int) (rss, peak int64) {
	rss, peak, _ = rssParts(pid)
	return rss, peak
}

// rssParts is rssTree with the anonymous part of the resident memory
// (RssAnon: the heap and stacks; the rest is files mapped into memory,
// Badger's tables and logs, which the kernel may drop under pressure).
func rssParts(pid int) (rss, peak, anon int64) {
	var walk func(pid int)
	walk = func(pid int) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return
		}
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && (f[0] == "VmRSS:" || f[0] == "VmHWM:" || f[0] == "RssAnon:") {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				switch {
				case f[0] == "VmRSS:":
					rss += n << 10
				case f[0] == "RssAnon:":
					anon += n << 10
				case n<<10 > peak:
					peak = n << 10
				}
			}
		}
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, task := range tasks {
			c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
			for _, s := range strings.Fields(string(c)) {
				if n, err := strconv.Atoi(s); err == nil {
					walk(n)
				}
			}
		}
	}
	walk(pid)
	return rss, peak, anon
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/1e6) }
func mib(n int64) string        { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func minD(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// TestServeRunnersBench: runner A fills the remote cache, runner B (empty
// local cache, its checkout at another path) renders the monorepo from
// it, for kpipe cache serve, nginx WebDAV and MinIO started side by side;
// runner B's runs alternate between the three servers. Outputs are
// checked byte-identical to --no-cache's, and runner B must build no
// node. Server memory is the resident set of the server's processes.
func TestServeRunnersBench(t *testing.T) {
	if !*serveBench {
		t.Skip("a measurement: run with -kpipe.servebench")
	}
	work := t.TempDir()
	bin := buildKpipe(t, work)
	spec := genrepo.Spec{Apps: 40, Envs: 4, ResourcesPerApp: 3}
	checkout := func(name string) string {
		d := filepath.Join(work, name)
		if _, err := genrepo.Write(d, spec); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := checkout("runnerA"), checkout("runnerB")
	n := 0
	type result struct {
		d     time.Duration
		built int
		out   string
	}
	run := func(tree string, extra ...string) result {
		n++
		out := filepath.Join(work, fmt.Sprint("out", n))
		rep := filepath.Join(work, fmt.Sprint("report", n, ".json"))
		args := append([]string{"build-all", ".", "--out-dir", out, "--report", rep}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Dir = tree
		t0 := time.Now()
		o, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if err != nil || strings.Contains(string(o), "Warning: remote") {
			t.Fatalf("%v: %v\n%s", args, err, o)
		}
		var r struct {
			Summary struct{ NodesBuilt int } `json:"summary"`
		}
		data, _ := os.ReadFile(rep)
		json.Unmarshal(data, &r)
		return result{d, r.Summary.NodesBuilt, out}
	}
	newCache := func() string { n++; return filepath.Join(work, fmt.Sprint("cache", n)) }
	ref := run(b, "--no-cache")

	type srv struct {
		name, url string
		pid       int
		first     result
		second    []time.Duration
	}
	kp, _ := startServeProc(t, bin, filepath.Join(work, "serve-store"))
	defer kp.stop()
	ng := remotetest.StartNginx(t, remotetest.NginxOptions{})
	mn := remotetest.StartMinIO(t)
	servers := []*srv{
		{name: "kpipe cache serve (Badger)", url: kp.url, pid: kp.cmd.Process.Pid},
		{name: "nginx WebDAV", url: ng.URL, pid: ng.PID()},
		{name: "MinIO (S3)", url: mn.URL, pid: mn.PID()},
	}
	for _, s := range servers {
		s.first = run(a, "--cache-dir", newCache(), "--remote-cache", s.url, "--remote-cache-write")
	}
	for range 5 {
		for _, s := range servers {
			r := run(b, "--cache-dir", newCache(), "--remote-cache", s.url)
			if r.built != 0 {
				t.Fatalf("%s: runner B built %d nodes", s.name, r.built)
			}
			if !sameTree(t, r.out, ref.out) {
				t.Fatalf("%s: runner B's outputs differ from --no-cache's", s.name)
			}
			s.second = append(s.second, r.d)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d roots (genrepo %d apps x %d envs, %d extra resources per app); runner B: median of 5, the servers alternating; --no-cache: %s\n\n",
		spec.Apps*spec.Envs, spec.Apps, spec.Envs, spec.ResourcesPerApp, ms(ref.d))
	fmt.Fprintf(&sb, "| remote | runner A (fills it) | runner B (empty cache, other path) | B / kpipe cache serve's B | server RSS after (anonymous) | server peak RSS (largest process) |\n|---|---|---|---|---|---|\n")
	base := median(servers[0].second)
	for _, s := range servers {
		rss, peak, anon := rssParts(s.pid)
		fmt.Fprintf(&sb, "| %s | %s | %s | %.2fx | %s (%s) | %s |\n", s.name, ms(s.first.d), ms(median(s.second)),
			float64(median(s.second))/float64(base), mib(rss), mib(anon), mib(peak))
	}
	fmt.Fprintf(&sb, "\nEvery runner B built no node; its outputs are byte-identical to --no-cache's.\n")
	fmt.Println(sb.String())
}

// sameTree says whether two output directories hold the same files with
// the same bytes (the manifest left out).
func sameTree(t *testing.T, a, b string) bool {
	read := func(dir string) map[string]string {
		m := map[string]string{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
				data, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				m[rel] = string(data)
			}
			return nil
		})
		return m
	}
	ma, mb := read(a), read(b)
	if len(ma) == 0 || len(ma) != len(mb) {
		return false
	}
	for k, v := range ma {
		if mb[k] != v {
			return false
		}
	}
	return true
}

// fillStore writes n entries (a few hundred bytes each, as small nodes'
// records) through the Badger store's API, as the server stores
// /ac/ objects, from 8 goroutines (the store batches their writes).
func fillStore(t *testing.T, dir string, n int) time.Duration {
	t.Helper()
	s := cache.Open(context.Background(), cache.Options{Dir: dir, KV: badger.OpenKV, MaxSize: 1 << 40,
		Warn: func(m string) { t.Errorf("store: %s", m) }})
	if s == nil {
		t.Fatal("no store")
	}
	t0 := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				k := cache.NewKey("startup-bench", "entry").String(strconv.FormatInt(i, 10)).Sum()
				s.Put(k, []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: entry-%d\ndata:\n  value: %x\n", i, k[:16])))
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return time.Since(t0)
}

// TestServeStartupBench: the time from exec to the first answered
// /healthz of kpipe cache serve on a store of 1,000 entries and one of
// 1,000,000, alternating, and the first GET of an entry after each
// start; the server stopped with SIGTERM between starts. Also after a
// kill -9 (the write-ahead log replayed).
func TestServeStartupBench(t *testing.T) {
	if !*startupBench {
		t.Skip("a measurement: run with -kpipe.startupbench")
	}
	work := t.TempDir()
	bin := buildKpipe(t, work)
	small, big := filepath.Join(work, "small"), filepath.Join(work, "big")
	ds := fillStore(t, small, 1000)
	db := fillStore(t, big, *startupN)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Stores written through the store API from 8 goroutines: 1,000 entries in %s, %d in %s (%.0f entries/s).\n\n",
		ms(ds), *startupN, ms(db), float64(*startupN)/db.Seconds())
	type row struct {
		starts, opens, firstGet []time.Duration
		rss                     int64
		disk                    float64
	}
	rows := map[string]*row{small: {}, big: {}}
	k := cache.NewKey("startup-bench", "entry").String("7").Sum()
	for range 9 {
		for _, dir := range []string{small, big} {
			p, d := startServeProc(t, bin, dir, "--max-size", "100GiB")
			if _, v, ok := strings.Cut(p.log.String(), "opened in "); ok {
				f, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
				rows[dir].opens = append(rows[dir].opens, time.Duration(f*1e6))
			}
			t0 := time.Now()
			resp, err := http.Get(p.url + "/ac/" + hex.EncodeToString(k[:]))
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("first GET: %v %v", resp, err)
			}
			resp.Body.Close()
			r := rows[dir]
			r.firstGet = append(r.firstGet, time.Since(t0))
			r.starts = append(r.starts, d)
			r.rss, _ = rssTree(p.cmd.Process.Pid)
			r.disk = p.metric(t, "kpipe_cache_store_disk_bytes")
			p.stop()
		}
	}
	// After kill -9 with writes in the log: 5,000 uploads from 16
	// clients, then SIGKILL.
	crash := map[string]time.Duration{}
	for _, dir := range []string{small, big} {
		p, _ := startServeProc(t, bin, dir, "--max-size", "100GiB")
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for i := next.Add(1); i <= 5000; i = next.Add(1) {
					if !putCAS(t, p.url, []byte(fmt.Sprintf("crash-%s-%d", dir, i))) {
						return
					}
				}
			})
		}
		wg.Wait()
		p.cmd.Process.Kill()
		<-p.done
		p, crash[dir] = startServeProc(t, bin, dir, "--max-size", "100GiB")
		p.stop()
	}
	fmt.Fprintf(&sb, "| store | entries | exec to /healthz, median of 9 (min) | store open, as the server logs it, median (min) | first GET | RSS after the GET | store on disk | exec to /healthz after kill -9 (5,000 writes in the log) |\n|---|---|---|---|---|---|---|---|\n")
	for _, x := range []struct {
		dir string
		n   int
	}{{small, 1000}, {big, *startupN}} {
		r := rows[x.dir]
		fmt.Fprintf(&sb, "| %s | %d | %s (%s) | %.1f ms (%.1f ms) | %.1f ms | %s | %s | %s |\n", filepath.Base(x.dir), x.n, ms(median(r.starts)), ms(minD(r.starts)),
			float64(median(r.opens))/1e6, float64(minD(r.opens))/1e6,
			float64(median(r.firstGet))/1e6, mib(r.rss), mib(int64(r.disk)), ms(crash[x.dir]))
	}
	fmt.Fprintf(&sb, "\nbig / small: exec to /healthz %.2fx (medians), %.2fx (minimums); store open %.2fx (medians)\n",
		float64(median(rows[big].starts))/float64(median(rows[small].starts)), float64(minD(rows[big].starts))/float64(minD(rows[small].starts)),
		float64(median(rows[big].opens))/float64(median(rows[small].opens)))
	fmt.Println(sb.String())
}

func hexSum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// putCAS uploads b to the server at url as content; false (after an
// error) when it was not stored.
func putCAS(t *testing.T, url string, b []byte) bool {
	req, _ := http.NewRequest("PUT", url+"/cas/"+hexSum(b), bytes.NewReader(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("PUT: %v %v", resp, err)
		return false
	}
	resp.Body.Close()
	return true
}

// TestServeMaxSizeBench fills a server bounded to 256 MiB with
// -kpipe.fill times that (default 3) from 8 clients, sampling /metrics
// every 250 ms, three times: with objects of 4 KiB to 1 MiB and of 1 to
// 64 KiB (nearly all of them blob files) and of 100 B to 4 KiB (all of
// them in Badger's tables). The bound is held at every sample; the disk the store takes
// (its metric, and du of its directory) is reported at the end of the
// fill and a minute later, against the bound (at most 1.2x).
func TestServeMaxSizeBench(t *testing.T) {
	if !*serveBench {
		t.Skip("a measurement: run with -kpipe.servebench")
	}
	work := t.TempDir()
	bin := buildKpipe(t, work)
	const bound = 256 << 20
	var sb strings.Builder
	fmt.Fprintf(&sb, "| objects | uploaded | upload rate | held, largest sample | evictions | disk (metric): largest sample / end / a minute later | du of the store: end / a minute later | a minute later / --max-size | server RSS (anonymous) / peak |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, mix := range []struct {
		name     string
		min, max int
	}{{"4 KiB to 1 MiB", 4 << 10, 1 << 20}, {"1 to 64 KiB", 1 << 10, 64 << 10}, {"100 B to 4 KiB", 100, 4 << 10}} {
		store := filepath.Join(work, "store-"+fmt.Sprint(mix.max))
		p, _ := startServeProc(t, bin, store, "--max-size", "256MiB", "--max-object", "8MiB")
		var maxHeld, maxDisk float64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				select {
				case <-stop:
					return
				case <-time.After(250 * time.Millisecond):
				}
				maxHeld = max(maxHeld, p.metric(t, "kpipe_cache_store_bytes"))
				maxDisk = max(maxDisk, p.metric(t, "kpipe_cache_store_disk_bytes"))
			}
		}()
		var sent, next atomic.Int64
		t0 := time.Now()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for sent.Load() < int64(*fillFactor*bound) {
					i := next.Add(1)
					size := mix.min + int(i*7919)%(mix.max-mix.min)
					b := bytes.Repeat([]byte(fmt.Sprintf("%012d", i)), max(1, size/12))
					if !putCAS(t, p.url, b) {
						return
					}
					sent.Add(int64(len(b)))
				}
			})
		}
		wg.Wait()
		d := time.Since(t0)
		close(stop)
		<-sampled
		held := p.metric(t, "kpipe_cache_store_bytes")
		disk := p.metric(t, "kpipe_cache_store_disk_bytes")
		du := duOf(t, store)
		ev := p.metric(t, "kpipe_cache_evictions_total")
		rss, peak, anon := rssParts(p.cmd.Process.Pid)
		// Give the value log GC its minute, then look at the disk again.
		time.Sleep(70 * time.Second)
		req, _ := http.NewRequest("PUT", p.url+"/cas/"+hexSum([]byte("last")), bytes.NewReader([]byte("last")))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		time.Sleep(2 * time.Second)
		diskLater, duLater := p.metric(t, "kpipe_cache_store_disk_bytes"), duOf(t, store)
		p.stop()
		fmt.Fprintf(&sb, "| %s | %s in %d objects | %.1f MiB/s | %s | %.0f | %s / %s / %s | %s / %s | %.2fx | %s (%s) / %s |\n", mix.name, mib(sent.Load()), next.Load(),
			float64(sent.Load())/(1<<20)/d.Seconds(), mib(int64(maxHeld)), ev, mib(int64(maxDisk)), mib(int64(disk)), mib(int64(diskLater)),
			mib(du), mib(duLater), float64(duLater)/bound, mib(rss), mib(anon), mib(peak))
		if maxHeld > bound || held > bound {
			t.Errorf("%s: the store held %v bytes, over its bound %d", mix.name, maxHeld, bound)
		}
		if float64(duLater) > 1.2*bound {
			t.Errorf("%s: the store takes %s on disk a minute after the fill, over 1.2x its bound", mix.name, mib(duLater))
		}
	}
	fmt.Println(sb.String())
}

// fillFactor is how many times its bound TestServeMaxSizeBench uploads.
var fillFactor = flag.Float64("kpipe.fill", 3, "fill TestServeMaxSizeBench's server with this many times its bound")

// duOf is what the files under dir take on disk: du -sk's count (0
// without du).
func duOf(t *testing.T, dir string) int64 {
	t.Helper()
	out, err := exec.Command("du", "-sk", dir).Output()
	if err != nil {
		return 0
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return 0
	}
	k, _ := strconv.ParseInt(f[0], 10, 64)
	return k << 10
}

// TestEmbedderStoreBench renders 10,000 roots three times in one process
// through the public API (kpipe.New, BuildAll), with the file store and
// with the Badger store (kpipe.BadgerStore): each in a child process of
// its own, alternating, twice. It reports each pass's time, the child's
// peak RSS, the files and directories the cache created and the disk it
// takes (du).
func TestEmbedderStoreBench(t *testing.T) {
	if os.Getenv("KPIPE_EMBED_CHILD") != "" {
		embedChild(t)
		return
	}
	if !*embedBench {
		t.Skip("a measurement: run with -kpipe.embedbench")
	}
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	roots, err := genrepo.Write(repo, genrepo.Spec{Apps: *embedApps, Envs: 4, ResourcesPerApp: 3})
	if err != nil {
		t.Fatal(err)
	}
	var abs []string
	for _, r := range roots {
		abs = append(abs, filepath.Join(repo, r))
	}
	list := filepath.Join(work, "roots.txt")
	if err := os.WriteFile(list, []byte(strings.Join(abs, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	type res struct {
		passes []time.Duration
		rss    int64
		files  int
		du     int64
	}
	results := map[string][]res{}
	for i := range 2 {
		for _, store := range []string{"files", "badger"} {
			dir := filepath.Join(work, fmt.Sprintf("cache-%s-%d", store, i))
			cmd := exec.Command(os.Args[0], "-test.run=^TestEmbedderStoreBench$", "-test.v")
			cmd.Env = append(os.Environ(), "KPIPE_EMBED_CHILD="+store, "KPIPE_EMBED_ROOTS="+list, "KPIPE_EMBED_CACHE="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", store, err, out)
			}
			var r res
			for _, l := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "PASS-TIME "); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					r.passes = append(r.passes, time.Duration(n))
				}
			}
			if len(r.passes) != 3 {
				t.Fatalf("%s: %s", store, out)
			}
			r.rss = procstat.MaxRSS(cmd.ProcessState)
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil {
					r.files++
				}
				return nil
			})
			if b, err := exec.Command("du", "-sk", dir).Output(); err == nil {
				f := strings.Fields(string(b))
				k, _ := strconv.ParseInt(f[0], 10, 64)
				r.du = k << 10
			}
			results[store] = append(results[store], r)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d roots (genrepo %d apps x 4 envs, 3 extra resources per app), one process, kpipe.New + BuildAll three times (GOMAXPROCS %d); each store twice, alternating, in a child process of its own\n\n",
		len(roots), *embedApps, runtime.GOMAXPROCS(0))
	fmt.Fprintf(&sb, "| store | run | pass 1 (cold) | pass 2 | pass 3 | peak RSS | files and directories created | disk (du) |\n|---|---|---|---|---|---|---|---|\n")
	for _, store := range []string{"files", "badger"} {
		for i, r := range results[store] {
			fmt.Fprintf(&sb, "| %s | %d | %s | %s | %s | %s | %d | %s |\n", store, i+1, ms(r.passes[0]), ms(r.passes[1]), ms(r.passes[2]), mib(r.rss), r.files, mib(r.du))
		}
	}
	f, b := results["files"], results["badger"]
	ratio := func(i int) float64 {
		return float64(b[0].passes[i]+b[1].passes[i]) / float64(f[0].passes[i]+f[1].passes[i])
	}
	fmt.Fprintf(&sb, "\nbadger / files, both runs: pass 1 %.2fx, pass 2 %.2fx, pass 3 %.2fx; peak RSS %.2fx; files %.4fx; disk %.2fx\n",
		ratio(0), ratio(1), ratio(2), float64(b[0].rss+b[1].rss)/float64(f[0].rss+f[1].rss),
		float64(b[0].files+b[1].files)/float64(f[0].files+f[1].files), float64(b[0].du+b[1].du)/float64(f[0].du+f[1].du))
	fmt.Println(sb.String())
}

// embedChild is the child of TestEmbedderStoreBench: three passes over
// every root of the repository, with one cache.
func embedChild(t *testing.T) {
	dir := os.Getenv("KPIPE_EMBED_CACHE")
	list, err := os.ReadFile(os.Getenv("KPIPE_EMBED_ROOTS"))
	if err != nil {
		t.Fatal(err)
	}
	roots := strings.Fields(string(list))
	var opts []kpipe.CacheOption
	if os.Getenv("KPIPE_EMBED_CHILD") == "badger" {
		opts = append(opts, kpipe.BadgerStore())
	}
	ctx := context.Background()
	c, err := kpipe.OpenCache(ctx, dir, func(m string) { t.Errorf("cache: %s", m) }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	r := kpipe.New(kpipe.Options{Cache: c})
	var first map[string][]byte
	for pass := range 3 {
		t0 := time.Now()
		res := r.BuildAll(ctx, roots)
		d := time.Since(t0)
		out := map[string][]byte{}
		for _, x := range res {
			if x.Err != nil {
				t.Fatalf("%s: %v", x.Dir, x.Err)
			}
			out[x.Dir] = x.YAML
		}
		if pass == 0 {
			first = out
		} else {
			for k, v := range out {
				if !bytes.Equal(v, first[k]) {
					t.Fatalf("pass %d: %s differs from pass 1", pass+1, k)
				}
			}
		}
		fmt.Printf("PASS-TIME %d\n", d.Nanoseconds())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
