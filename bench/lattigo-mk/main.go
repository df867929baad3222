// Command lattigo-mk-bench times Lattigo v6.1.1's multiparty (threshold/multi-party RLWE)
// protocols as peers of coterie's multi-key BFV with threshold re-encryption (seed 001, issue 13;
// bench/mkbfv.sh), and prints one JSON line per measurement:
//
//	{"impl":"lattigo","op":"reenc","proxies":4,"n":8192,"logq":220,"ns":12345.6,"samples":11}
//
// "ns" is the median over the samples of the mean time per call inside one sample (a timed batch
// of back-to-back calls). One goroutine; run with GOMAXPROCS=1.
//
// Parameters: ring degree N = 8192, Q = 4 primes of 55 bits (log Q = 220, coterie's
// Params::seed001 modulus size) and one 55-bit special prime P that only the relinearization-key
// round uses (Lattigo's key switching needs it; log QP = 275). Secrets and errors are discrete
// Gaussians of sigma 3.2 (as seed 001); the noise flooding of the key-switching protocols is a
// Gaussian of sigma 2^20 (seed 001's smudging). The protocols run at the rlwe level: they do not
// depend on the plaintext modulus (Lattigo's bgv refuses t = 256 anyway: it needs t = 1 mod 16).
//
// Operations (the work of one party, as coterie's bench times it; every share comes from the
// party's own secret, the others' shares are precomputed):
//
//	keygen    (k)        one party's collective key generation round: its secret key, its
//	                     PublicKeyGenProtocol share, its RelinearizationKeyGenProtocol round-one
//	                     and round-two shares, then the aggregation of the k parties' shares of
//	                     each (k-1 additions each) and GenPublicKey + GenRelinearizationKey.
//	thr_dec   (k)        threshold decryption by KeySwitchProtocol to the zero key: one party's
//	                     GenShare, the aggregation of the k shares, KeySwitch, and the decryption
//	                     under the zero key (the phase; Lattigo leaves the scale-and-round to t to
//	                     its encoders, which this figure does not include).
//	reenc     (proxies)  public-key switching (PublicKeySwitchProtocol) of a ciphertext under the
//	                     N parties' collective key to a receiver's public key: one party's
//	                     GenShare, the aggregation of the N shares and KeySwitch. The ciphertext has
//	                     two parts (one collective key): it does not grow with the number of users.
//	pks_share (proxies)  GenShare alone (one party's share of the above).
//
// Every path is checked before it is timed: the switched ciphertext decrypts under the target key
// to a phase far below Q (log2 of the largest coefficient is printed to stderr).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/multiparty"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"
)

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "lattigo-mk-bench:", err)
		os.Exit(1)
	}
}

// measure returns the median over `samples` of the mean time per call of f, each sample
// running enough calls to last about `target`.
func measure(f func(), samples int, target time.Duration) float64 {
	f()
	start := time.Now()
	f()
	one := time.Since(start)
	iters := int(target / (one + 1))
	if iters < 1 {
		iters = 1
	}
	res := make([]float64, samples)
	for s := range res {
		t0 := time.Now()
		for i := 0; i < iters; i++ {
			f()
		}
		res[s] = float64(time.Since(t0).Nanoseconds()) / float64(iters)
	}
	sort.Float64s(res)
	return res[samples/2]
}

// collective returns m secret keys and their sum.
func collective(params rlwe.Parameters, kgen *rlwe.KeyGenerator, m int) ([]*rlwe.SecretKey, *rlwe.SecretKey) {
	sks := make([]*rlwe.SecretKey, m)
	sum := rlwe.NewSecretKey(params)
	ringQP := params.RingQP()
	for i := range sks {
		sks[i] = kgen.GenSecretKeyNew()
		ringQP.Add(sum.Value, sks[i].Value, sum.Value)
	}
	return sks, sum
}

// maxLog2 is log2 of the largest absolute coefficient of ct's phase under sk.
func maxLog2(params rlwe.Parameters, ct *rlwe.Ciphertext, sk *rlwe.SecretKey) float64 {
	_, _, mx := rlwe.Norm(ct, rlwe.NewDecryptor(params, sk))
	return mx
}

func main() {
	quick := flag.Bool("quick", false, "k = 2, 8 and N = 1, 8 only")
	samples := flag.Int("samples", 11, "samples per operation")
	flag.Parse()
	ks := []int{2, 4, 8}
	ns := []int{1, 2, 4, 8}
	if *quick {
		ks, ns = []int{2, 8}, []int{1, 8}
	}
	gauss := ring.DiscreteGaussian{Sigma: 3.2, Bound: 19.2}
	params, err := rlwe.NewParametersFromLiteral(rlwe.ParametersLiteral{
		LogN: 13, LogQ: []int{55, 55, 55, 55}, LogP: []int{55}, Xs: gauss, Xe: gauss, NTTFlag: true,
	})
	check(err)
	logq := int(params.LogQ() + 0.5)
	n := params.N()
	flood := ring.DiscreteGaussian{Sigma: 1 << 20, Bound: 6 * (1 << 20)}
	kgen := rlwe.NewKeyGenerator(params)
	out := json.NewEncoder(os.Stdout)
	emit := func(op, key string, val int, ns float64) {
		check(out.Encode(map[string]interface{}{
			"impl": "lattigo", "op": op, key: val, "n": n, "logq": logq, "ns": ns, "samples": *samples,
		}))
	}
	target := 300 * time.Millisecond
	crs, err := sampling.NewKeyedPRNG([]byte("coterie lattigo-mk bench"))
	check(err)

	// Collective key generation round and threshold decryption, k parties.
	for _, k := range ks {
		sks, sum := collective(params, kgen, k)
		ckg := multiparty.NewPublicKeyGenProtocol(params)
		rkg := multiparty.NewRelinearizationKeyGenProtocol(params)
		ckgCRP := ckg.SampleCRP(crs)
		rkgCRP := rkg.SampleCRP(crs)
		ckgShares := make([]multiparty.PublicKeyGenShare, k)
		eph := make([]*rlwe.SecretKey, k)
		r1 := make([]multiparty.RelinearizationKeyGenShare, k)
		r2 := make([]multiparty.RelinearizationKeyGenShare, k)
		for i := range sks {
			ckgShares[i] = ckg.AllocateShare()
			ckg.GenShare(sks[i], ckgCRP, &ckgShares[i])
			eph[i], r1[i], r2[i] = rkg.AllocateShare()
			rkg.GenShareRoundOne(sks[i], rkgCRP, eph[i], &r1[i])
		}
		_, r1Agg, r2Agg := rkg.AllocateShare()
		rkg.AggregateShares(r1[0], r1[1], &r1Agg)
		for i := 2; i < k; i++ {
			rkg.AggregateShares(r1Agg, r1[i], &r1Agg)
		}
		ckgAgg := ckg.AllocateShare()
		pk := rlwe.NewPublicKey(params)
		rlk := rlwe.NewRelinearizationKey(params)
		keygen := func() {
			sk := kgen.GenSecretKeyNew()
			ckg.GenShare(sk, ckgCRP, &ckgShares[0])
			rkg.GenShareRoundOne(sk, rkgCRP, eph[0], &r1[0])
			rkg.GenShareRoundTwo(eph[0], sk, r1Agg, &r2[0])
			ckg.AggregateShares(ckgShares[0], ckgShares[1], &ckgAgg)
			rkg.AggregateShares(r1[0], r1[1], &r1Agg)
			rkg.AggregateShares(r2[0], r2[1], &r2Agg)
			for i := 2; i < k; i++ {
				ckg.AggregateShares(ckgAgg, ckgShares[i], &ckgAgg)
				rkg.AggregateShares(r1Agg, r1[i], &r1Agg)
				rkg.AggregateShares(r2Agg, r2[i], &r2Agg)
			}
			ckg.GenPublicKey(ckgAgg, ckgCRP, pk)
			rkg.GenRelinearizationKey(r1Agg, r2Agg, rlk)
		}
		// The real round (party 0's own key), then its check: pk encrypts under sum.
		for i := range sks {
			rkg.GenShareRoundTwo(eph[i], sks[i], r1Agg, &r2[i])
		}
		ckg.AggregateShares(ckgShares[0], ckgShares[1], &ckgAgg)
		for i := 2; i < k; i++ {
			ckg.AggregateShares(ckgAgg, ckgShares[i], &ckgAgg)
		}
		ckg.GenPublicKey(ckgAgg, ckgCRP, pk)
		ct := rlwe.NewEncryptor(params, pk).EncryptZeroNew(params.MaxLevel())
		fmt.Fprintf(os.Stderr, "lattigo-mk-bench: k=%d fresh ciphertext under the collective key: log2 max phase %.1f\n",
			k, maxLog2(params, ct, sum))

		// Threshold decryption: key switch to the zero key.
		cks, err := multiparty.NewKeySwitchProtocol(params, flood)
		check(err)
		zero := rlwe.NewSecretKey(params)
		cksShares := make([]multiparty.KeySwitchShare, k)
		for i := range sks {
			cksShares[i] = cks.AllocateShare(ct.Level())
			cks.GenShare(sks[i], zero, ct, &cksShares[i])
		}
		cksAgg := cks.AllocateShare(ct.Level())
		ctOut := rlwe.NewCiphertext(params, 1, ct.Level())
		dec := rlwe.NewDecryptor(params, zero)
		pt := rlwe.NewPlaintext(params, ct.Level())
		thrDec := func() {
			cks.GenShare(sks[0], zero, ct, &cksShares[0])
			check(cks.AggregateShares(cksShares[0], cksShares[1], &cksAgg))
			for i := 2; i < k; i++ {
				check(cks.AggregateShares(cksAgg, cksShares[i], &cksAgg))
			}
			cks.KeySwitch(ct, cksAgg, ctOut)
			dec.Decrypt(ctOut, pt)
		}
		thrDec()
		fmt.Fprintf(os.Stderr, "lattigo-mk-bench: k=%d after threshold decryption: log2 max phase %.1f (log Q %d)\n",
			k, maxLog2(params, ctOut, zero), logq)
		emit("thr_dec", "k", k, measure(thrDec, *samples, target))
		emit("keygen", "k", k, measure(keygen, *samples, target))
	}

	// Public-key switching among N parties to a receiver's key.
	for _, m := range ns {
		sks, sum := collective(params, kgen, m)
		pkIn := kgen.GenPublicKeyNew(sum)
		skOut, pkOut := kgen.GenKeyPairNew()
		ct := rlwe.NewEncryptor(params, pkIn).EncryptZeroNew(params.MaxLevel())
		pcks, err := multiparty.NewPublicKeySwitchProtocol(params, flood)
		check(err)
		shares := make([]multiparty.PublicKeySwitchShare, m)
		for i := range sks {
			shares[i] = pcks.AllocateShare(ct.Level())
			pcks.GenShare(sks[i], pkOut, ct, &shares[i])
		}
		agg := pcks.AllocateShare(ct.Level())
		ctOut := rlwe.NewCiphertext(params, 1, ct.Level())
		reenc := func() {
			pcks.GenShare(sks[0], pkOut, ct, &shares[0])
			if m == 1 {
				pcks.KeySwitch(ct, shares[0], ctOut)
				return
			}
			check(pcks.AggregateShares(shares[0], shares[1], &agg))
			for i := 2; i < m; i++ {
				check(pcks.AggregateShares(agg, shares[i], &agg))
			}
			pcks.KeySwitch(ct, agg, ctOut)
		}
		reenc()
		fmt.Fprintf(os.Stderr, "lattigo-mk-bench: N=%d after public-key switching: log2 max phase under the receiver's key %.1f (log Q %d)\n",
			m, maxLog2(params, ctOut, skOut), logq)
		emit("reenc", "proxies", m, measure(reenc, *samples, target))
		emit("pks_share", "proxies", m, measure(func() { pcks.GenShare(sks[0], pkOut, ct, &shares[0]) }, *samples, target))
	}
}
