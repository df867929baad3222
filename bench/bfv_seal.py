#!/usr/bin/env python3
"""Microsoft SEAL (PyPI `seal-python` 4.1.2, SEAL 4.1) BFV beside coterie-bfv's bench.

Prints one JSON line per (op, N) like bench/lattigo-bfv: {"impl":"seal","op":...,"n":...,"ns":...}.
"ns" is the median over SAMPLES batches of the mean time per call; the timed region is the Python
call into the pybind11 binding, which adds well under 1 µs to a call of milliseconds. SEAL runs
single-threaded here (its BFV calls use no threads).

Parameters: t = 65537, CoeffModulus.BFVDefault(N) (N = 8192: 43+43+44+44+44 = 218 bits,
N = 16384: 438 bits), i.e. the same prime sizes as coterie's he_std_128 sets; SEAL uses the last
prime as its special key-switching prime (like Lattigo's P).

Ops: encrypt_pk (Encryptor.encrypt), encrypt_sk (encrypt_symmetric), decrypt (Decryptor.decrypt,
scaled to mod t), decrypt_decode (+ BatchEncoder.decode), mul_no_relin (Evaluator.multiply of two
different ciphertexts), mul_relin (multiply + relinearize_inplace), rotate (Evaluator.rotate_rows
by 1: SEAL's "rows" rotation is the rotation inside each of the two rows, what the others call
a column rotation).

Usage: bfv_seal.py [--quick] [--samples K]
"""
import json
import sys
import time

import seal


def measure(f, samples, target=0.3):
    f()
    t0 = time.perf_counter()
    f()
    one = time.perf_counter() - t0
    iters = max(1, int(target / max(one, 1e-9)))
    res = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            f()
        res.append((time.perf_counter_ns() - t0) / iters)
    res.sort()
    return res[len(res) // 2]


def main():
    quick = "--quick" in sys.argv
    samples = 11
    if "--samples" in sys.argv:
        samples = int(sys.argv[sys.argv.index("--samples") + 1])
    degrees = [8192] if quick else [8192, 16384]
    for n in degrees:
        parms = seal.EncryptionParameters(seal.scheme_type.bfv)
        parms.set_poly_modulus_degree(n)
        parms.set_coeff_modulus(seal.CoeffModulus.BFVDefault(n))
        parms.set_plain_modulus(65537)
        ctx = seal.SEALContext(parms)
        logq = ctx.key_context_data().total_coeff_modulus_bit_count()
        kg = seal.KeyGenerator(ctx)
        sk = kg.secret_key()
        pk = kg.create_public_key()
        rk = kg.create_relin_keys()
        gk = kg.create_galois_keys()  # all power-of-two steps (the binding takes Galois elements only)
        enc = seal.Encryptor(ctx, pk)
        enc.set_secret_key(sk)
        dec = seal.Decryptor(ctx, sk)
        ev = seal.Evaluator(ctx)
        ecd = seal.BatchEncoder(ctx)
        vals = [(i * 31) % 65537 for i in range(n)]
        pt = ecd.encode(vals)
        x = enc.encrypt(pt)
        y = enc.encrypt(pt)
        # Sanity: the product decrypts to the slot-wise square.
        z = ev.multiply(x, y)
        ev.relinearize_inplace(z, rk)
        got = ecd.decode(dec.decrypt(z))
        assert all(int(got[i]) % 65537 == vals[i] * vals[i] % 65537 for i in range(n)), "wrong product"

        def mul_relin():
            c = ev.multiply(x, y)
            ev.relinearize_inplace(c, rk)

        ops = [
            ("encrypt_pk", lambda: enc.encrypt(pt)),
            ("encrypt_sk", lambda: enc.encrypt_symmetric(pt)),
            ("decrypt", lambda: dec.decrypt(x)),
            ("decrypt_decode", lambda: ecd.decode(dec.decrypt(x))),
            ("mul_no_relin", lambda: ev.multiply(x, y)),
            ("mul_relin", mul_relin),
            ("rotate", lambda: ev.rotate_rows(x, 1, gk)),
        ]
        for name, f in ops:
            ns = measure(f, samples)
            print(json.dumps({"impl": "seal", "op": name, "n": n, "logq": logq, "ns": ns,
                              "samples": samples}), flush=True)


if __name__ == "__main__":
    main()
