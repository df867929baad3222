// Command lattigo-bfv-bench times Lattigo v6.1.1's BFV (the scale-invariant mode of package bgv)
// beside coterie-bfv's criterion bench, and prints one JSON line per (op, N):
//
//	{"impl":"lattigo","op":"mul_relin","n":8192,"logq":218,"ns":12345.6,"samples":21}
//
// "ns" is the median over the samples of the mean time per call inside one sample (a timed batch
// of back-to-back calls). One goroutine; run with GOMAXPROCS=1.
//
// Parameters: t = 65537; N = 8192 with LogQ = [55, 55, 54], LogP = [54] (log QP = 218) and
// N = 16384 with LogQ = [55 x 6, 54], LogP = [54] (log QP = 438): the HE-standard 128-bit bounds
// on the total modulus, as coterie's Params::he_std_128_n8192/n16384 (Lattigo needs the special
// prime P for key switching, so Q alone is smaller than coterie's).
//
// Operations (ciphertexts at the top level, as produced by the encryptor):
//
//	encrypt_pk    Encryptor(pk).Encrypt(pt, ct) into a preallocated ciphertext.
//	encrypt_sk    Encryptor(sk).Encrypt(pt, ct) (Lattigo samples c1 from a PRNG seed too).
//	decrypt       Decryptor.Decrypt(ct, pt): c0 + c1*s in R_Q only; Lattigo scales by t/Q
//	              in the encoder, so this is NOT comparable to the others' decrypt.
//	decrypt_decode  Decrypt, then Encoder.Decode to the slot values (the comparable figure).
//	mul_relin     Evaluator(scale-invariant).MulRelin(x, y, out): BFV tensor + relinearization.
//	mul_no_relin  Evaluator(scale-invariant).Mul(x, y, out) (degree-2 output).
//	rotate        Evaluator.RotateColumns(x, 1, out).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

type result struct {
	Impl    string  `json:"impl"`
	Op      string  `json:"op"`
	N       int     `json:"n"`
	LogQ    int     `json:"logq"`
	Ns      float64 `json:"ns"`
	Samples int     `json:"samples"`
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "lattigo-bfv-bench:", err)
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

func main() {
	quick := flag.Bool("quick", false, "N = 8192 only")
	samples := flag.Int("samples", 11, "samples per operation")
	flag.Parse()
	type set struct {
		logN       int
		logQ, logP []int
	}
	sets := []set{{13, []int{55, 55, 54}, []int{54}}}
	if !*quick {
		sets = append(sets, set{14, []int{55, 55, 55, 55, 55, 55, 54}, []int{54}})
	}
	enc := json.NewEncoder(os.Stdout)
	for _, s := range sets {
		params, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{
			LogN: s.logN, LogQ: s.logQ, LogP: s.logP, PlaintextModulus: 65537,
		})
		check(err)
		kgen := rlwe.NewKeyGenerator(params)
		sk, pk := kgen.GenKeyPairNew()
		rlk := kgen.GenRelinearizationKeyNew(sk)
		gk := kgen.GenGaloisKeyNew(params.GaloisElementForColRotation(1), sk)
		evk := rlwe.NewMemEvaluationKeySet(rlk, gk)
		ecd := bgv.NewEncoder(params)
		n := params.N()
		vals := make([]uint64, n)
		for i := range vals {
			vals[i] = uint64(i*31) % 65537
		}
		pt := bgv.NewPlaintext(params, params.MaxLevel())
		check(ecd.Encode(vals, pt))
		encPk := rlwe.NewEncryptor(params, pk)
		encSk := rlwe.NewEncryptor(params, sk)
		dec := rlwe.NewDecryptor(params, sk)
		eval := bgv.NewEvaluator(params, evk, true)
		x, err := encPk.EncryptNew(pt)
		check(err)
		y, err := encPk.EncryptNew(pt)
		check(err)
		out := bgv.NewCiphertext(params, 1, params.MaxLevel())
		out2 := bgv.NewCiphertext(params, 2, params.MaxLevel())
		ptOut := bgv.NewPlaintext(params, params.MaxLevel())
		logQ := int(params.LogQP() + 0.5)
		// Sanity: the product decrypts to the slot-wise square.
		check(eval.MulRelin(x, y, out))
		got := make([]uint64, n)
		check(ecd.Decode(dec.DecryptNew(out), got))
		for i := range got {
			if got[i] != vals[i]*vals[i]%65537 {
				check(fmt.Errorf("wrong product in slot %d", i))
			}
		}
		ops := []struct {
			name string
			f    func()
		}{
			{"encrypt_pk", func() { check(encPk.Encrypt(pt, out)) }},
			{"encrypt_sk", func() { check(encSk.Encrypt(pt, out)) }},
			{"decrypt", func() { dec.Decrypt(x, ptOut) }},
			{"decrypt_decode", func() { dec.Decrypt(x, ptOut); check(ecd.Decode(ptOut, got)) }},
			{"mul_relin", func() { check(eval.MulRelin(x, y, out)) }},
			{"mul_no_relin", func() { check(eval.Mul(x, y, out2)) }},
			{"rotate", func() { check(eval.RotateColumns(x, 1, out)) }},
		}
		for _, op := range ops {
			ns := measure(op.f, *samples, 300*time.Millisecond)
			check(enc.Encode(result{"lattigo", op.name, n, logQ, ns, *samples}))
		}
	}
}
