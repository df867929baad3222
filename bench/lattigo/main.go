// Command lattigo-bench times the ring arithmetic of Lattigo v6 (package ring) on the
// coterie peer-benchmark grid and prints one JSON line per (op, N, limbs):
//
//	{"impl":"lattigo","op":"rq_mul","n":8192,"limbs":4,"logq":220,"ns":12345.6,"samples":31}
//
// "ns" is the median, over the samples, of the mean time per operation inside one sample
// (a timed batch of back-to-back calls). Everything runs on one goroutine; bench/ring.sh
// also sets GOMAXPROCS=1.
//
// Moduli: the L largest 55-bit primes p = 1 mod 2N (Lattigo's NTTFriendlyPrimesGenerator,
// downstream from 2^55), and for base_ext the next L primes below them as the basis P.
//
// Operations:
//
//	ntt_fwd         Ring.NTT, in place, on one polynomial with L limbs (output in [0, q)).
//	ntt_inv         Ring.INTT, in place.
//	rq_mul          Ring.MulCoeffsMontgomery(a, b, c): a, b in the NTT domain, b also in
//	                Montgomery form (what Lattigo's schemes keep keys/ciphertexts in), c a
//	                separate output polynomial in the NTT domain.
//	rq_mul_barrett  Ring.MulCoeffsBarrett(a, b, c): NTT domain, standard form, separate output.
//	base_ext        BasisExtender.ModUpQtoP(L-1, L-1, a, b): exact, centred extension of a
//	                coefficient-domain polynomial from Q (L primes) to P (L other primes).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"
)

// primeBits is the bit size of every RNS prime on the grid.
const primeBits = 55

type result struct {
	Impl    string  `json:"impl"`
	Op      string  `json:"op"`
	N       int     `json:"n"`
	Limbs   int     `json:"limbs"`
	LogQ    int     `json:"logq"`
	Ns      float64 `json:"ns"`
	Samples int     `json:"samples"`
}

type config struct {
	samples  int
	batch    time.Duration
	warmup   time.Duration
	ops      map[string]bool
	printQ   bool
	encoder  *json.Encoder
	progress bool
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("bad integer %q: %w", f, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// genPrimes returns the 2L largest 55-bit primes = 1 mod 2N, in decreasing order.
func genPrimes(n, count int) ([]uint64, error) {
	g := ring.NewNTTFriendlyPrimesGenerator(primeBits, uint64(2*n))
	return g.NextDownstreamPrimes(count)
}

func logQ(moduli []uint64) int {
	s := 0.0
	for _, q := range moduli {
		s += math.Log2(float64(q))
	}
	return int(math.Round(s))
}

// measure runs f in batches and returns the median ns per call over cfg.samples batches.
func measure(cfg *config, f func()) float64 {
	// Warm up, and find how many calls fill one batch.
	iters := 1
	start := time.Now()
	for time.Since(start) < cfg.warmup {
		f()
	}
	for {
		t0 := time.Now()
		for i := 0; i < iters; i++ {
			f()
		}
		el := time.Since(t0)
		if el >= cfg.batch || iters >= 1<<30 {
			break
		}
		if el <= 0 {
			iters *= 10
			continue
		}
		next := int(float64(iters) * 1.2 * float64(cfg.batch) / float64(el))
		if next <= iters {
			next = iters + 1
		}
		iters = next
	}
	perOp := make([]float64, cfg.samples)
	for s := range perOp {
		t0 := time.Now()
		for i := 0; i < iters; i++ {
			f()
		}
		perOp[s] = float64(time.Since(t0).Nanoseconds()) / float64(iters)
	}
	sort.Float64s(perOp)
	m := len(perOp)
	if m%2 == 1 {
		return perOp[m/2]
	}
	return (perOp[m/2-1] + perOp[m/2]) / 2
}

func (cfg *config) emit(op string, n, limbs, lq int, ns float64) error {
	if cfg.progress {
		fmt.Fprintf(os.Stderr, "lattigo %-14s n=%-5d limbs=%d  %12.1f ns\n", op, n, limbs, ns)
	}
	return cfg.encoder.Encode(result{Impl: "lattigo", Op: op, N: n, Limbs: limbs, LogQ: lq, Ns: ns, Samples: cfg.samples})
}

func benchPoint(cfg *config, n, limbs int) error {
	primes, err := genPrimes(n, 2*limbs)
	if err != nil {
		return fmt.Errorf("prime generation (n=%d, %d primes): %w", n, 2*limbs, err)
	}
	qMod, pMod := primes[:limbs], primes[limbs:]
	if cfg.printQ {
		fmt.Fprintf(os.Stderr, "lattigo primes n=%d limbs=%d Q=%v P=%v\n", n, limbs, qMod, pMod)
	}
	rQ, err := ring.NewRing(n, qMod)
	if err != nil {
		return fmt.Errorf("ring Q: %w", err)
	}
	rP, err := ring.NewRing(n, pMod)
	if err != nil {
		return fmt.Errorf("ring P: %w", err)
	}
	lq := logQ(qMod)

	prng, err := sampling.NewKeyedPRNG([]byte("coterie-ring-bench"))
	if err != nil {
		return err
	}
	us := ring.NewUniformSampler(prng, rQ)
	a := us.ReadNew()
	b := us.ReadNew()
	c := rQ.NewPoly()

	if cfg.ops["ntt_fwd"] {
		x := *a.CopyNew()
		if err := cfg.emit("ntt_fwd", n, limbs, lq, measure(cfg, func() { rQ.NTT(x, x) })); err != nil {
			return err
		}
	}
	if cfg.ops["ntt_inv"] {
		x := *a.CopyNew()
		rQ.NTT(x, x)
		if err := cfg.emit("ntt_inv", n, limbs, lq, measure(cfg, func() { rQ.INTT(x, x) })); err != nil {
			return err
		}
	}
	if cfg.ops["rq_mul"] || cfg.ops["rq_mul_barrett"] {
		an, bn := *a.CopyNew(), *b.CopyNew()
		rQ.NTT(an, an)
		rQ.NTT(bn, bn)
		if cfg.ops["rq_mul_barrett"] {
			ns := measure(cfg, func() { rQ.MulCoeffsBarrett(an, bn, c) })
			if err := cfg.emit("rq_mul_barrett", n, limbs, lq, ns); err != nil {
				return err
			}
		}
		if cfg.ops["rq_mul"] {
			bm := *bn.CopyNew()
			rQ.MForm(bm, bm)
			ns := measure(cfg, func() { rQ.MulCoeffsMontgomery(an, bm, c) })
			if err := cfg.emit("rq_mul", n, limbs, lq, ns); err != nil {
				return err
			}
		}
	}
	if cfg.ops["base_ext"] {
		be := ring.NewBasisExtender(rQ, rP)
		out := rP.NewPoly()
		lQ, lP := rQ.Level(), rP.Level()
		ns := measure(cfg, func() { be.ModUpQtoP(lQ, lP, a, out) })
		if err := cfg.emit("base_ext", n, limbs, lq, ns); err != nil {
			return err
		}
	}
	runtime.GC()
	return nil
}

func main() {
	nFlag := flag.String("n", "4096,8192,16384,32768", "comma-separated ring degrees N")
	lFlag := flag.String("limbs", "2,4,8", "comma-separated numbers L of 55-bit primes in Q")
	opsFlag := flag.String("ops", "ntt_fwd,ntt_inv,rq_mul,rq_mul_barrett,base_ext", "comma-separated operations")
	samples := flag.Int("samples", 31, "timed batches per benchmark (the median is reported); at least 21")
	batchMs := flag.Float64("batch-ms", 10, "target duration of one timed batch, in ms")
	warmupMs := flag.Float64("warmup-ms", 300, "warm-up duration per benchmark, in ms")
	printQ := flag.Bool("print-primes", false, "print the generated moduli to stderr")
	quiet := flag.Bool("quiet", false, "no progress lines on stderr")
	flag.Parse()

	runtime.GOMAXPROCS(1)
	ns, err := parseInts(*nFlag)
	if err == nil && len(ns) == 0 {
		err = fmt.Errorf("empty -n")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lattigo-bench:", err)
		os.Exit(2)
	}
	ls, err := parseInts(*lFlag)
	if err == nil && len(ls) == 0 {
		err = fmt.Errorf("empty -limbs")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lattigo-bench:", err)
		os.Exit(2)
	}
	if *samples < 21 {
		fmt.Fprintln(os.Stderr, "lattigo-bench: -samples must be at least 21")
		os.Exit(2)
	}
	known := map[string]bool{"ntt_fwd": true, "ntt_inv": true, "rq_mul": true, "rq_mul_barrett": true, "base_ext": true}
	ops := map[string]bool{}
	for _, o := range strings.Split(*opsFlag, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if !known[o] {
			fmt.Fprintf(os.Stderr, "lattigo-bench: unknown op %q\n", o)
			os.Exit(2)
		}
		ops[o] = true
	}
	cfg := &config{
		samples:  *samples,
		batch:    time.Duration(*batchMs * float64(time.Millisecond)),
		warmup:   time.Duration(*warmupMs * float64(time.Millisecond)),
		ops:      ops,
		printQ:   *printQ,
		encoder:  json.NewEncoder(os.Stdout),
		progress: !*quiet,
	}
	for _, n := range ns {
		for _, l := range ls {
			if err := benchPoint(cfg, n, l); err != nil {
				fmt.Fprintf(os.Stderr, "lattigo-bench: n=%d limbs=%d: %v\n", n, l, err)
				os.Exit(1)
			}
		}
	}
}
