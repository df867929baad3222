#!/usr/bin/env python3
"""OpenFHE's threshold BFV and BFV proxy re-encryption (PyPI wheel `openfhe`) as peers of coterie's
multi-key BFV with threshold re-encryption (seed 001, issue 13; run by bench/mkbfv.sh).

Prints one JSON line per measurement (bench/benchrec.py's `nsjsonl` form):

    {"impl": "openfhe", "op": "thr_dec", "k": 4, "n": 8192, "logq": 220, "ns": 1234.5, "samples": 7}

`ns` is the median of `samples` timed calls (time.perf_counter_ns). Run with OMP_NUM_THREADS=1
(bench/mkbfv.sh does): one thread, as coterie's figures.

Parameters: BFVrns, ring dimension 8192, t = 256 (coefficient packing), Gaussian secrets
(SecretKeyDist.GAUSSIAN, sigma 3.2, as seed 001), MultipartyMode.NOISE_FLOODING_MULTIPARTY (the
partial decryptions are flooded, as seed 001's smudging), multiplicative depth 1 and
scaling-modulus size 50 bits: OpenFHE then picks Q of 220 bits (log2 printed to stderr and
recorded), the paper's and coterie's log q. SecurityLevel.HEStd_NotSet (the ring dimension is
forced; 8192 with 220 bits is the HE standard's bound for Gaussian secrets).

Operations (the work of one party; the other parties' shares are precomputed):

  keygen    one party's part of the joint key generation: MultipartyKeyGen on the previous
            party's public key, its MultiKeySwitchGen share of the relinearization key and its
            MultiMultEvalKey on the joint key (OpenFHE's threshold-fhe example's per-party
            steps; the aggregations MultiAddEvalKeys / MultiAddEvalMultKeys are not included).
            Does not depend on k.
  thr_dec   (k) one non-lead party's MultipartyDecryptMain followed by MultipartyDecryptFusion
            of the k partial decryptions (the lead's MultipartyDecryptLead precomputed), to the
            plaintext polynomial mod t.
  rekeygen  ReKeyGen(sk_delegator, pk_delegatee) (PRE, one proxy).
  reenc     ReEncrypt(ct, rk) of a one-user ciphertext (PRE, one proxy, no threshold).
  decrypt   the delegatee's Decrypt of the re-encrypted ciphertext (single key).

Every path is checked (the decrypted coefficients equal the encrypted ones) before it is timed.
"""

import argparse
import json
import math
import os
import sys
import time

import openfhe as o


def median_ns(f, samples):
    f()
    ts = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        f()
        ts.append(time.perf_counter_ns() - t0)
    ts.sort()
    return ts[len(ts) // 2]


def context():
    p = o.CCParamsBFVRNS()
    p.SetPlaintextModulus(256)
    p.SetMultiplicativeDepth(1)
    p.SetScalingModSize(50)
    p.SetRingDim(8192)
    p.SetSecurityLevel(o.SecurityLevel.HEStd_NotSet)
    p.SetSecretKeyDist(o.SecretKeyDist.GAUSSIAN)
    p.SetMultipartyMode(o.MultipartyMode.NOISE_FLOODING_MULTIPARTY)
    cc = o.GenCryptoContext(p)
    for feat in (o.PKESchemeFeature.PKE, o.PKESchemeFeature.KEYSWITCH, o.PKESchemeFeature.LEVELEDSHE,
                 o.PKESchemeFeature.MULTIPARTY, o.PKESchemeFeature.PRE):
        cc.Enable(feat)
    return cc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="k = 2 and 8 only")
    ap.add_argument("--samples", type=int, default=7)
    args = ap.parse_args()
    ks = [2, 8] if args.quick else [2, 4, 8]
    cc = context()
    n = cc.GetRingDimension()
    logq = round(math.log2(cc.GetModulus()))
    print(f"openfhe_mk: ring dimension {n}, log2 Q = {math.log2(cc.GetModulus()):.1f}, t = 256",
          file=sys.stderr)
    vals = [(7 * i + 3) % 256 for i in range(16)]
    pt = cc.MakeCoefPackedPlaintext(vals)

    def emit(op, ns, **params):
        print(json.dumps({"impl": "openfhe", "op": op, **params, "n": n, "logq": logq, "ns": float(ns),
                          "samples": args.samples}), flush=True)

    def coeffs(p, m=len(vals)):
        return [c % 256 for c in p.GetCoefPackedValue()[:m]]

    # Per-party joint key generation (two parties; the per-party steps do not depend on k).
    kp1 = cc.KeyGen()
    emk1 = cc.KeySwitchGen(kp1.secretKey, kp1.secretKey)
    kp2 = cc.MultipartyKeyGen(kp1.publicKey)
    emk2 = cc.MultiKeySwitchGen(kp2.secretKey, kp2.secretKey, emk1)
    emk_ab = cc.MultiAddEvalKeys(emk1, emk2, kp2.publicKey.GetKeyTag())

    def keygen():
        kp = cc.MultipartyKeyGen(kp1.publicKey)
        cc.MultiKeySwitchGen(kp.secretKey, kp.secretKey, emk1)
        cc.MultiMultEvalKey(kp.secretKey, emk_ab, kp2.publicKey.GetKeyTag())

    emit("keygen", median_ns(keygen, args.samples))

    # Threshold decryption among k parties.
    for k in ks:
        kps = [cc.KeyGen()]
        for _ in range(1, k):
            kps.append(cc.MultipartyKeyGen(kps[-1].publicKey))
        ct = cc.Encrypt(kps[-1].publicKey, pt)
        lead = cc.MultipartyDecryptLead([ct], kps[0].secretKey)[0]
        mains = [cc.MultipartyDecryptMain([ct], kp.secretKey)[0] for kp in kps[1:]]
        res = cc.MultipartyDecryptFusion([lead] + mains)
        if coeffs(res) != vals:
            sys.exit(f"openfhe_mk: threshold decryption of {k} parties is wrong")

        def thr_dec():
            m = cc.MultipartyDecryptMain([ct], kps[1].secretKey)[0]
            cc.MultipartyDecryptFusion([lead, m] + mains[1:])

        emit("thr_dec", median_ns(thr_dec, args.samples), k=k)

    # Proxy re-encryption (one proxy).
    alice, bob = cc.KeyGen(), cc.KeyGen()
    ct = cc.Encrypt(alice.publicKey, pt)
    rk = cc.ReKeyGen(alice.secretKey, bob.publicKey)
    rct = cc.ReEncrypt(ct, rk)
    if coeffs(cc.Decrypt(bob.secretKey, rct)) != vals:
        sys.exit("openfhe_mk: re-encryption is wrong")
    emit("rekeygen", median_ns(lambda: cc.ReKeyGen(alice.secretKey, bob.publicKey), args.samples), proxies=1)
    emit("reenc", median_ns(lambda: cc.ReEncrypt(ct, rk), args.samples), k=1, proxies=1)
    emit("decrypt", median_ns(lambda: cc.Decrypt(bob.secretKey, rct), args.samples), k=1)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
