"""Tests of coterie.bfv against independent arithmetic (numpy / Python ints): encode, encrypt,
add, multiply, rotate, serialization, multi-key BFV with threshold decryption, threshold
re-encryption, collective keys, and bad input raising clear exceptions. Most tests use the
crate's insecure toy sets; one uses the 128-bit HE-standard set at N = 8192."""

import struct
import threading
import time

import numpy as np
import pytest

import coterie
from coterie import bfv
from coterie.bfv import CoterieError

RNG = np.random.default_rng()


# ---------------------------------------------------------------------------------------------
# Helpers (independent reference arithmetic).


def negacyclic(a, b, t):
    """a·b in Z_t[X]/(X^N + 1), in Python ints (no overflow)."""
    n = len(a)
    out = [0] * n
    for i, x in enumerate(int(v) for v in a):
        if x == 0:
            continue
        for j, y in enumerate(int(v) for v in b):
            k = i + j
            if k < n:
                out[k] += x * y
            else:
                out[k - n] -= x * y
    return np.array([v % t for v in out], dtype=np.uint64)


def cyclotomic_mul(a, b, d, base, p):
    """a·b in Z_p[X]/(X^D − b) for representatives of degree < D."""
    out = [0] * (2 * d)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    for k in range(2 * d - 1, d - 1, -1):  # X^k = b·X^(k−D)
        out[k - d] += base * out[k]
    return [v % p for v in out[:d]]


def rows_roll(v, k):
    """np.roll of both batching rows (N/2 slots each) to the left by k."""
    n = len(v)
    return np.roll(v.reshape(2, n // 2), -k, axis=1).reshape(n)


@pytest.fixture(scope="module")
def toy():
    """Batching toy set N = 256, t = 65537 (insecure) with keys for rotations 1, −1, 5."""
    params = bfv.Params.by_name("insecure_toy", n=256, t=65537)
    return params, bfv.keygen(params, rotations=[1, -1, 5], row_swap=True)


@pytest.fixture(scope="module")
def toy_coeff():
    """Coefficient-encoding toy set N = 256, t = 256 (insecure)."""
    return bfv.Params.by_name("insecure_toy", n=256, t=256)


def rand_vec(n, t):
    return RNG.integers(0, t, size=n, dtype=np.uint64)


# ---------------------------------------------------------------------------------------------
# Parameters.


def test_named_sets_and_properties():
    names = bfv.Params.names()
    for n in ["he_std_128_n4096", "he_std_128_n8192", "seed001", "matrigear_ii", "insecure_toy"]:
        assert n in names
    p = bfv.Params.by_name("he_std_128_n4096")
    assert (p.degree, p.t, p.plaintext_modulus, p.log_q) == (4096, 65537, 65537, 109)
    assert p.supports_batching and p.slots == 4096 and p.default_encoding == "simd"
    assert p.security.startswith("128-bit") and p.secret_distribution == "ternary"
    assert len(p.moduli) == 3 and sum(q.bit_length() for q in p.moduli) == 109
    assert p.max_level == 2 and p.cyclotomic is None and p.sigma == 3.2
    s = bfv.Params.by_name("seed001")
    assert (s.degree, s.t, s.log_q, s.secret_distribution) == (8192, 256, 220, "gaussian")
    assert not s.supports_batching and s.slots is None and s.default_encoding == "coefficients"
    toy = bfv.Params.by_name("insecure_toy", n=1024, t=257)
    assert "INSECURE" in toy.security and toy.degree == 1024 and not toy.supports_batching
    m = bfv.Params.by_name("matrigear_ii", log_p=128)
    d, b, mm = m.cyclotomic
    assert m.plaintext_modulus == b**mm + 1 and m.slots == d == 1024 and m.t is None
    assert m.plaintext_modulus.bit_length() == 128 and m.default_encoding == "slots"
    c = bfv.Params.custom("mine", 1024, 257, log_q=120, security="none")
    assert (c.name, c.degree, c.t, c.log_q) == ("mine", 1024, 257, 120)
    c2 = bfv.Params.custom("mine", 1024, 257, moduli=c.moduli, security="none")
    assert c2 == c and hash(c2) == hash(c) and c != p
    # equality is the crate's fingerprint (degree, moduli, t, σ, secret), not the name
    assert c == toy and c.fingerprint == toy.fingerprint
    assert len(p.fingerprint) == 32 and "he-std-128-n4096" in repr(p)


def test_bad_parameter_arguments():
    with pytest.raises(ValueError, match="unknown parameter set"):
        bfv.Params.by_name("he_std_128_n1024")
    with pytest.raises(ValueError, match="takes no argument"):
        bfv.Params.by_name("seed001", t=257)
    with pytest.raises(ValueError, match="needs log_p"):
        bfv.Params.by_name("matrigear_i")
    with pytest.raises(ValueError, match="power of two"):
        bfv.Params.by_name("insecure_toy", n=1000)
    with pytest.raises(CoterieError, match="log p"):
        bfv.Params.by_name("matrigear_ii", log_p=100)
    with pytest.raises(CoterieError, match="N = 2\\^18"):
        bfv.Params.by_name("matrigear_iii", log_p=1024)
    with pytest.raises(CoterieError, match="plaintext modulus"):
        bfv.Params.by_name("insecure_toy", t=1)
    with pytest.raises(CoterieError, match="not prime"):
        bfv.Params.by_name("insecure_toy_cyclotomic", n=32, b=128, m=4)
    with pytest.raises(ValueError, match="exactly one"):
        bfv.Params.custom("x", 1024, 257, security="")
    with pytest.raises(ValueError, match="secret"):
        bfv.Params.custom("x", 1024, 257, log_q=120, secret="binary", security="")
    with pytest.raises(TypeError):
        bfv.Params.by_name(42)


# ---------------------------------------------------------------------------------------------
# Single-key arithmetic against numpy.


def test_simd_add_sub_multiply_match_numpy(toy):
    params, keys = toy
    t, n = params.t, params.degree
    a, b, c = rand_vec(n, t), rand_vec(n, t), rand_vec(n, t)
    x, y = bfv.encrypt(keys.public_key, a), bfv.encrypt(keys.public_key, b)
    z = bfv.encrypt(keys.public_key, c)
    dec = lambda ct: bfv.decrypt(keys.secret_key, ct)
    assert x.num_parts == 2 and x.key_ids is None and x.level == params.max_level
    np.testing.assert_array_equal(dec(x), a)
    np.testing.assert_array_equal(dec(bfv.add(x, y)), (a + b) % t)
    np.testing.assert_array_equal(dec(x + y), (a + b) % t)
    np.testing.assert_array_equal(dec(bfv.sub(x, y)), (a + t - b) % t)
    np.testing.assert_array_equal(dec(-x), (t - a) % t)
    ab = (a.astype(object) * b.astype(object)) % t
    np.testing.assert_array_equal(dec(bfv.multiply(x, y, keys.relin_key)), ab.astype(np.uint64))
    # depth 2: (a·b)·c
    abc = (ab * c.astype(object)) % t
    xyz = bfv.multiply(bfv.multiply(x, y, keys.relin_key), z, keys.relin_key)
    np.testing.assert_array_equal(dec(xyz), abc.astype(np.uint64))
    # tensor then relinearize = multiply
    t3 = x.mul_no_relin(y)
    assert t3.num_parts == 3
    np.testing.assert_array_equal(dec(t3), ab.astype(np.uint64))
    np.testing.assert_array_equal(dec(t3.relinearize(keys.relin_key)), ab.astype(np.uint64))
    assert keys.secret_key.noise_budget(xyz) < keys.secret_key.noise_budget(x)
    # Python ints and lists are accepted; fewer values than slots leave zeros.
    short = dec(bfv.encrypt(keys.public_key, [1, 2, 65536]))
    assert short.dtype == np.uint64 and short.shape == (n,)
    np.testing.assert_array_equal(short[:4], [1, 2, 65536, 0])


def test_plaintext_operations(toy):
    params, keys = toy
    t, n = params.t, params.degree
    a, b = rand_vec(n, t), rand_vec(n, t)
    x = bfv.encrypt(keys.public_key, a)
    pb = bfv.encode(params, b)
    np.testing.assert_array_equal(bfv.decode(pb), b)
    dec = lambda ct: bfv.decrypt(keys.secret_key, ct)
    prod = ((a.astype(object) * b.astype(object)) % t).astype(np.uint64)
    np.testing.assert_array_equal(dec(x + pb), (a + b) % t)
    np.testing.assert_array_equal(dec(pb + x), (a + b) % t)
    np.testing.assert_array_equal(dec(x - pb), (a + t - b) % t)
    np.testing.assert_array_equal(dec(x * pb), prod)
    np.testing.assert_array_equal(dec(bfv.multiply(x, pb)), prod)
    np.testing.assert_array_equal(dec(bfv.add(x, pb)), (a + b) % t)
    np.testing.assert_array_equal(dec(bfv.sub(x, pb)), (a + t - b) % t)
    # symmetric encryption and the Plaintext round trip
    y = keys.secret_key.encrypt_symmetric(pb)
    assert keys.secret_key.decrypt(y) == pb
    with pytest.raises(TypeError, match="relinearization key"):
        x * x


def test_coefficient_encoding_is_negacyclic(toy_coeff):
    params = toy_coeff
    keys = bfv.keygen(params)
    t, n = 256, params.degree
    assert params.default_encoding == "coefficients"
    a, b = rand_vec(n, t), rand_vec(n, t)
    x, y = bfv.encrypt(keys.public_key, a), bfv.encrypt(keys.public_key, b)
    z = bfv.multiply(x, y, keys.relin_key)
    np.testing.assert_array_equal(bfv.decrypt(keys.secret_key, z), negacyclic(a, b, t))
    np.testing.assert_array_equal(bfv.decrypt(keys.secret_key, x + y), (a + b) % t)
    with pytest.raises(CoterieError, match="batching"):
        bfv.encode(params, [1], "simd")


def test_rotations_match_np_roll(toy):
    params, keys = toy
    n = params.degree
    a = np.arange(n, dtype=np.uint64) * 7 % params.t
    x = bfv.encrypt(keys.public_key, a)
    for k in (1, -1, 5):
        got = bfv.decrypt(keys.secret_key, bfv.rotate(x, k, keys.galois_keys))
        np.testing.assert_array_equal(got, rows_roll(a, k))
    swapped = bfv.decrypt(keys.secret_key, bfv.swap_rows(x, keys.galois_keys))
    np.testing.assert_array_equal(swapped, np.concatenate([a[n // 2 :], a[: n // 2]]))
    # rotation by 0 needs no key; a missing key is named
    np.testing.assert_array_equal(bfv.decrypt(keys.secret_key, bfv.rotate(x, 0, keys.galois_keys)), a)
    with pytest.raises(CoterieError, match="missing key: Galois key for rotation by 2"):
        bfv.rotate(x, 2, keys.galois_keys)
    assert len(keys.galois_keys) == 4 and 5 in keys.galois_keys.elements


def test_mod_switch_keeps_the_plaintext(toy):
    params, keys = toy
    a = rand_vec(params.degree, params.t)
    x = bfv.encrypt(keys.public_key, a)
    y = x.mod_switch_to_next()
    assert y.level == x.level - 1
    np.testing.assert_array_equal(bfv.decrypt(keys.secret_key, y), a)
    with pytest.raises(CoterieError, match="operand mismatch|level"):
        x + y
    z = y.mod_switch_to_next()
    with pytest.raises(CoterieError, match="modulus switch below the last prime"):
        z.mod_switch_to_next()


def test_real_parameters_he_std_128_n8192():
    params = bfv.Params.by_name("he_std_128_n8192", t=65537)
    keys = bfv.keygen(params, rotations=[3])
    n, t = params.degree, params.t
    a, b = rand_vec(n, t), rand_vec(n, t)
    x, y = bfv.encrypt(keys.public_key, a), bfv.encrypt(keys.public_key, b)
    z = bfv.rotate(bfv.multiply(x, y, keys.relin_key), 3, keys.galois_keys)
    want = rows_roll(((a.astype(object) * b.astype(object)) % t).astype(np.uint64), 3)
    np.testing.assert_array_equal(bfv.decrypt(keys.secret_key, z), want)
    assert keys.secret_key.noise_budget(z) > 100


def test_power_of_two_relin_key(toy):
    params, keys = toy
    rlk = keys.secret_key.relin_key(base_log=20)
    assert rlk.base_log == 20 and keys.relin_key.base_log is None
    a = rand_vec(params.degree, params.t)
    x = bfv.encrypt(keys.public_key, a)
    want = ((a.astype(object) ** 2) % params.t).astype(np.uint64)
    np.testing.assert_array_equal(bfv.decrypt(keys.secret_key, bfv.multiply(x, x, rlk)), want)
    with pytest.raises(ValueError, match="base_log"):
        keys.secret_key.relin_key(base_log=63)


# ---------------------------------------------------------------------------------------------
# Cyclotomic (MatriGear) plaintexts.


def test_cyclotomic_slots_and_representative():
    params = bfv.Params.by_name("insecure_toy_cyclotomic", n=32, b=132, m=4)  # Toy-B, insecure
    d, base, _ = params.cyclotomic
    p = params.plaintext_modulus
    assert (d, base, p) == (8, 132, 132**4 + 1)
    keys = bfv.keygen(params, rotations=[1])
    vals = [int(v) for v in RNG.integers(0, p, size=d)]
    other = [int(v) for v in RNG.integers(0, p, size=d)]
    x, y = bfv.encrypt(keys.public_key, vals), bfv.encrypt(keys.public_key, other)
    prod = [(u * v) % p for u, v in zip(vals, other)]
    assert bfv.decrypt(keys.secret_key, bfv.multiply(x, y, keys.relin_key)) == prod
    rot = bfv.decrypt(keys.secret_key, bfv.rotate(x, 1, keys.galois_keys))
    assert rot == vals[1:] + vals[:1]
    # the representative over Z_p[X]/(X^D − b)
    ra = [int(v) for v in RNG.integers(0, p, size=d)]
    rb = [int(v) for v in RNG.integers(0, p, size=d)]
    xa = bfv.encrypt(keys.public_key, ra, "coefficients")
    xb = bfv.encrypt(keys.public_key, rb, "coefficients")
    got = bfv.decrypt(keys.secret_key, bfv.multiply(xa, xb, keys.relin_key), "coefficients")
    assert got == cyclotomic_mul(ra, rb, d, base, p)
    with pytest.raises(ValueError, match="outside \\[0, p\\)"):
        bfv.encode(params, [p])
    with pytest.raises(ValueError, match="9 values for D = 8"):
        bfv.encode(params, list(range(9)))
    with pytest.raises(ValueError, match="does not apply"):
        bfv.encode(params, [1], "simd")
    with pytest.raises(ValueError, match="row_swap"):
        bfv.keygen(params, row_swap=True)


def test_cyclotomic_128_bit_values_round_trip():
    params = bfv.Params.by_name("insecure_toy_cyclotomic", n=1024, b=65340, m=8)
    p = params.plaintext_modulus
    assert p.bit_length() == 128
    keys = bfv.keygen(params)
    vals = [p - 1, 2**127 + 12345, 0, 1]
    x = bfv.encrypt(keys.public_key, vals)
    got = bfv.decrypt(keys.secret_key, x + x)
    assert got[:4] == [(2 * v) % p for v in vals] and len(got) == params.slots


# ---------------------------------------------------------------------------------------------
# Serialization.


def test_serialization_round_trips(toy):
    params, keys = toy
    a = rand_vec(params.degree, params.t)
    x = bfv.encrypt(keys.public_key, a)
    x2 = bfv.Ciphertext.from_bytes(params, x.to_bytes())
    np.testing.assert_array_equal(bfv.decrypt(keys.secret_key, x2), a)
    assert x2.to_bytes() == x.to_bytes()
    sk = bfv.SecretKey.from_bytes(params, keys.secret_key.to_bytes())
    np.testing.assert_array_equal(sk.coefficients(), keys.secret_key.coefficients())
    np.testing.assert_array_equal(bfv.decrypt(sk, x), a)
    pk = bfv.PublicKey.from_bytes(params, keys.public_key.to_bytes())
    np.testing.assert_array_equal(bfv.decrypt(sk, bfv.encrypt(pk, a)), a)
    rlk = bfv.RelinKey.from_bytes(params, keys.relin_key.to_bytes())
    sq = ((a.astype(object) ** 2) % params.t).astype(np.uint64)
    np.testing.assert_array_equal(bfv.decrypt(sk, bfv.multiply(x, x, rlk)), sq)
    gk = bfv.GaloisKeys.from_bytes(params, keys.galois_keys.to_bytes())
    assert gk.elements == keys.galois_keys.elements and gk.params == params
    np.testing.assert_array_equal(bfv.decrypt(sk, bfv.rotate(x, 1, gk)), rows_roll(a, 1))
    pt = bfv.encode(params, a)
    assert bfv.Plaintext.from_bytes(params, pt.to_bytes()) == pt


def _all_decoders():
    return [
        bfv.Ciphertext.from_bytes,
        bfv.Plaintext.from_bytes,
        bfv.SecretKey.from_bytes,
        bfv.PublicKey.from_bytes,
        bfv.RelinKey.from_bytes,
        bfv.GaloisKeys.from_bytes,
        bfv.MkRelinKey.from_bytes,
        bfv.PartialDecryption.from_bytes,
        bfv.MaskingKey.from_bytes,
        bfv.ReKeyShare.from_bytes,
        bfv.ReEncShare.from_bytes,
        bfv.ReEncryptedCiphertext.from_bytes,
    ]


def test_malformed_bytes_raise_coterie_error(toy):
    params, keys = toy
    x = bfv.encrypt(keys.public_key, [1, 2, 3])
    good = x.to_bytes()
    junk = [b"", b"junk", bytes(64), RNG.bytes(1000), good[:-1], good + b"\0", good[:20]]
    for decode in _all_decoders():
        for data in junk:
            with pytest.raises(CoterieError):
                decode(params, data)
    # the ciphertext's bytes are not a key (another envelope tag)
    with pytest.raises(CoterieError, match="envelope"):
        bfv.PublicKey.from_bytes(params, good)
    # another parameter set
    other = bfv.Params.by_name("insecure_toy", n=256, t=257)
    with pytest.raises(CoterieError, match="another parameter set"):
        bfv.Ciphertext.from_bytes(other, good)
    # every single-byte corruption of the header is an error, never a crash
    for i in range(14):
        bad = bytearray(good)
        bad[i] ^= 0xFF
        with pytest.raises(CoterieError):
            bfv.Ciphertext.from_bytes(params, bytes(bad))
    with pytest.raises(TypeError):
        bfv.Ciphertext.from_bytes(params, "not bytes")


def _varint(u):
    out = bytearray()
    while True:
        low, u = u & 0x7F, u >> 7
        out.append(low | (0x80 if u else 0))
        if not u:
            return bytes(out)


def test_secret_key_bytes_with_i64_min_raise_coterie_error(toy):
    """A well-formed envelope whose secret key holds the coefficient i64::MIN (postcard zigzag
    varint of 2^64 − 1): the crate's bound check computes |c| with an overflow, which the binding
    turns into a CoterieError instead of a PanicException."""
    params, _ = toy
    marker = 2**29 - 1
    good = bfv.SecretKey.from_coefficients(params, [marker] + [0] * 255).to_bytes()
    old = _varint(2 * marker)  # zigzag of a positive value
    i = good.index(old)
    payload = good[14:i] + _varint(2**64 - 1) + good[i + len(old) :]
    bad = good[:10] + struct.pack("<I", len(payload)) + payload
    with pytest.raises(CoterieError, match="malformed input"):
        bfv.SecretKey.from_bytes(params, bad)


# ---------------------------------------------------------------------------------------------
# Bad input.


def test_bad_values_raise(toy):
    params, keys = toy
    pk = keys.public_key
    with pytest.raises(ValueError, match="256 slots"):
        bfv.encrypt(pk, np.zeros(257, dtype=np.uint64))
    with pytest.raises(ValueError, match="not below the plaintext modulus t = 65537"):
        bfv.encrypt(pk, [65537])
    with pytest.raises(ValueError, match="negative"):
        bfv.encrypt(pk, np.array([1, -2]))
    with pytest.raises(ValueError, match="outside \\[0, 2\\^64\\)"):
        bfv.encrypt(pk, [2**64])
    with pytest.raises(ValueError, match="1-D"):
        bfv.encrypt(pk, np.zeros((2, 2), dtype=np.uint64))
    with pytest.raises(TypeError, match="dtype float64"):
        bfv.encrypt(pk, np.array([1.5]))
    with pytest.raises(TypeError, match="expected integers"):
        bfv.encrypt(pk, ["a"])
    with pytest.raises(ValueError, match="unknown encoding"):
        bfv.encrypt(pk, [1], "bits")
    with pytest.raises(TypeError):
        bfv.Plaintext.encode("not params", [1])
    with pytest.raises(TypeError):
        keys.secret_key.decrypt("not a ciphertext")
    x = bfv.encrypt(pk, [1])
    with pytest.raises(TypeError, match="MkRelinKey"):
        bfv.multiply(x, x, [1, 2])
    with pytest.raises(TypeError, match="expected a RelinKey"):
        bfv.multiply(x, x, 3)
    with pytest.raises(TypeError, match="needs relinearization keys"):
        bfv.multiply(x, x)
    with pytest.raises(ValueError, match="iterations"):
        bfv._rust_time_multiply(x, x, keys.relin_key, 0)
    with pytest.raises(ValueError, match="seed is 32 bytes"):
        bfv.MkCrs(params, b"short")
    with pytest.raises(ValueError, match="coefficients for degree"):
        bfv.SecretKey.from_coefficients(params, [0, 1])
    with pytest.raises(ValueError, match="below 2\\^30"):
        bfv.SecretKey.from_coefficients(params, [-(2**63)] + [0] * 255)
    with pytest.raises(OverflowError):
        bfv.SecretKey.from_coefficients(params, [2**64] + [0] * 255)
    with pytest.raises(ValueError, match="at most 64 primes"):
        bfv.Params.custom("x", 1024, 257, log_q=10**6, security="")


def test_mismatched_parameters_raise(toy):
    params, keys = toy
    other = bfv.Params.by_name("insecure_toy", n=256, t=257)
    okeys = bfv.keygen(other, rotations=[1])
    x = bfv.encrypt(keys.public_key, [1])
    y = bfv.encrypt(okeys.public_key, [1])
    for op in (
        lambda: x + y,
        lambda: bfv.multiply(x, x, okeys.relin_key),
        lambda: bfv.rotate(x, 1, okeys.galois_keys),
        lambda: okeys.secret_key.decrypt(x),
        lambda: keys.public_key.encrypt(bfv.encode(other, [1])),
        lambda: x * bfv.encode(other, [1]),
    ):
        with pytest.raises(CoterieError, match="different parameter sets"):
            op()


# ---------------------------------------------------------------------------------------------
# Multi-key BFV.


@pytest.fixture(scope="module")
def mk_users():
    params = bfv.Params.by_name("insecure_toy", n=256, t=256)
    crs = bfv.MkCrs(params, seed=bytes(range(32)))
    sks = [bfv.SecretKey.generate(params) for _ in range(3)]
    rlks = [bfv.MkRelinKey.generate(sk, i + 1, crs) for i, sk in enumerate(sks)]
    return params, crs, sks, rlks


def test_multi_key_multiply_and_threshold_decryption(mk_users):
    params, crs, sks, rlks = mk_users
    t, n = 256, params.degree
    assert crs.seed == bytes(range(32)) and crs.rows == 3 and crs.base_log is None
    a, b, c = rand_vec(n, t), rand_vec(n, t), rand_vec(n, t)
    x = bfv.mk_encrypt(sks[0].public_key(), 1, a)
    y = bfv.mk_encrypt(sks[1].public_key(), 2, b)
    z = bfv.mk_encrypt(sks[2].public_key(), 3, c)
    assert x.key_ids == [1] and x.num_parts == 2
    all_keys = [(i + 1, sk) for i, sk in enumerate(sks)]
    s = bfv.add(x, z)
    assert s.key_ids == [1, 3]
    np.testing.assert_array_equal(bfv.decode(bfv.mk_decrypt(s, all_keys)), (a + c) % t)
    np.testing.assert_array_equal(bfv.decode(bfv.mk_decrypt(y - x, all_keys)), (b + t - a) % t)
    want = negacyclic((a + c) % t, b, t)
    shared = bfv.SharedRelinKey(rlks)
    assert len(shared) == 9
    for keys, grouped in ((rlks, True), (rlks, False), (shared, True)):
        prod = bfv.multiply(s, y, keys, grouped=grouped)
        assert prod.key_ids == [1, 2, 3] and prod.num_parts == 4
        np.testing.assert_array_equal(bfv.decode(bfv.mk_decrypt(prod, all_keys)), want)
    tensor = s.mul_no_relin(y)
    assert tensor.is_tensor and tensor.num_parts == 16
    np.testing.assert_array_equal(bfv.decode(bfv.mk_decrypt(tensor, all_keys)), want)
    prod = tensor.relinearize(rlks)
    assert bfv.mk_noise_budget(prod, all_keys) > 0
    # threshold decryption: one partial decryption per user, then the merge
    smudging = bfv.Smudging.paper_sigma20()
    parts = [bfv.part_dec(sk, i + 1, prod, smudging) for i, sk in enumerate(sks)]
    np.testing.assert_array_equal(bfv.decode(bfv.merge(prod, parts)), want)
    parts2 = [bfv.PartialDecryption.from_bytes(params, p.to_bytes()) for p in parts]
    assert [p.id for p in parts2] == [1, 2, 3]
    np.testing.assert_array_equal(bfv.decode(bfv.merge(prod, parts2)), want)
    with pytest.raises(CoterieError, match="partial decryption of user 3 is missing"):
        bfv.merge(prod, parts[:2])
    with pytest.raises(CoterieError, match="another ciphertext"):
        bfv.merge(s, [parts[0], parts[2]])
    with pytest.raises(CoterieError, match="needs log q"):
        bfv.part_dec(sks[0], 1, prod, bfv.Smudging.statistical(80, 40))
    with pytest.raises(CoterieError, match="missing key"):
        bfv.multiply(s, y, rlks[:2])
    # a relinearization key survives serialization
    r2 = bfv.MkRelinKey.from_bytes(params, rlks[1].to_bytes())
    assert (r2.id, r2.rows, r2.crs_seed) == (2, 3, crs.seed)
    np.testing.assert_array_equal(
        bfv.decode(bfv.mk_decrypt(bfv.multiply(x, y, [rlks[0], r2]), all_keys)), negacyclic(a, b, t)
    )


def test_multi_key_with_the_paper_gadget(mk_users):
    params, _, sks, _ = mk_users
    assert [bfv.paper_base_log(k) for k in (2, 3, 4, 5, 8)] == [46, 40, 40, 34, 34]
    with pytest.raises(CoterieError, match="2 to 8 users"):
        bfv.paper_base_log(9)
    crs = bfv.MkCrs(params, base_log=bfv.paper_base_log(2))
    rlks = [bfv.MkRelinKey.generate(sk, i + 1, crs) for i, sk in enumerate(sks[:2])]
    assert crs.base_log == 46 and rlks[0].base_log == 46
    x = bfv.mk_label(sks[0].encrypt_symmetric(bfv.encode(params, [3, 1])), 1)
    y = bfv.mk_encrypt(sks[1].public_key(), 2, [5, 2])
    z = bfv.multiply(x, y, rlks)
    got = bfv.decode(bfv.mk_decrypt(z, [(1, sks[0]), (2, sks[1])]))
    np.testing.assert_array_equal(got[:4], [15, 11, 2, 0])


def test_threshold_re_encryption(mk_users):
    params, _, sks, _ = mk_users
    t, n = 256, params.degree
    a, b = rand_vec(n, t), rand_vec(n, t)
    ct = bfv.add(bfv.mk_encrypt(sks[0].public_key(), 1, a), bfv.mk_encrypt(sks[1].public_key(), 2, b))
    proxies, delegatee = 3, 9
    mk1, sh1 = bfv.rekey_gen(sks[0], 1, delegatee, proxies)
    # the two steps by hand for user 2: the delegatee samples, the delegator shares
    mk2 = bfv.MaskingKey.sample(params, 2, delegatee)
    sh2 = bfv.rekey_shares(sks[1], mk2, proxies)
    assert [s.proxy for s in sh1] == [0, 1, 2] and sh2[0].proxies == 3
    assert (mk2.delegator, mk2.delegatee, sh1[1].delegator, sh1[1].delegatee) == (2, 9, 1, 9)
    smudging = bfv.Smudging.paper_sigma20()
    shares = [bfv.reenc_share(j, delegatee, [sh1[j], sh2[j]], ct, smudging) for j in range(proxies)]
    rct = bfv.reenc_combine(ct, shares)
    assert rct.delegatee == 9 and rct.ciphertext.key_ids == [1, 2]
    np.testing.assert_array_equal(bfv.decode(bfv.decrypt_reencrypted([mk1, mk2], rct)), (a + b) % t)
    assert bfv.reenc_noise_budget([mk1, mk2], rct) > 0
    # everything that travels survives serialization
    rct2 = bfv.ReEncryptedCiphertext.from_bytes(params, rct.to_bytes())
    keys2 = [bfv.MaskingKey.from_bytes(params, k.to_bytes()) for k in (mk1, mk2)]
    np.testing.assert_array_equal(bfv.decode(bfv.decrypt_reencrypted(keys2, rct2)), (a + b) % t)
    sh1b = [bfv.ReKeyShare.from_bytes(params, s.to_bytes()) for s in sh1]
    sharesb = [bfv.ReEncShare.from_bytes(params, s.to_bytes()) for s in shares]
    assert [s.proxy for s in sharesb] == [0, 1, 2] and sharesb[0].delegatee == 9
    share0 = bfv.reenc_share(0, delegatee, [sh1b[0], sh2[0]], ct, smudging)
    rct3 = bfv.reenc_combine(ct, [share0] + sharesb[1:])
    np.testing.assert_array_equal(bfv.decode(bfv.decrypt_reencrypted([mk1, mk2], rct3)), (a + b) % t)
    with pytest.raises(CoterieError, match="re-encryption share of proxy 2 is missing"):
        bfv.reenc_combine(ct, shares[:2])
    with pytest.raises(CoterieError, match="share of user 2 .* is missing"):
        bfv.reenc_share(0, delegatee, [sh1[0]], ct, smudging)
    with pytest.raises(CoterieError, match="masking key of user 2"):
        bfv.decrypt_reencrypted([mk1], rct)
    with pytest.raises(CoterieError, match="proxies"):
        bfv.rekey_gen(sks[0], 1, delegatee, 0)


def test_collective_keys():
    params = bfv.Params.by_name("insecure_toy", n=256, t=65537)
    sks = [bfv.SecretKey.generate(params) for _ in range(3)]
    pk = bfv.collective_public_key(sks, seed=bytes(32))
    rlk = bfv.collective_relin_key(sks)
    # the ideal secret key s = Σ s_i decrypts what the collective keys produce
    s = bfv.SecretKey.from_coefficients(params, sum(sk.coefficients() for sk in sks))
    a, b = rand_vec(256, params.t), rand_vec(256, params.t)
    z = bfv.multiply(bfv.encrypt(pk, a), bfv.encrypt(pk, b), rlk)
    want = ((a.astype(object) * b.astype(object)) % params.t).astype(np.uint64)
    np.testing.assert_array_equal(bfv.decrypt(s, z), want)
    # one party's key alone does not decrypt
    assert not np.array_equal(bfv.decrypt(sks[0], z), want)
    with pytest.raises(ValueError, match="no secret keys"):
        bfv.collective_public_key([])


# ---------------------------------------------------------------------------------------------
# Benchmark helper and the GIL.


def test_rust_time_multiply_and_gil_release(toy, mk_users):
    params, keys = toy
    x = bfv.encrypt(keys.public_key, [1, 2])
    per = bfv._rust_time_multiply(x, x, keys.relin_key, 3)
    assert 0 < per < 1
    _, _, sks, rlks = mk_users
    y = bfv.mk_encrypt(sks[0].public_key(), 1, [2])
    w = bfv.mk_encrypt(sks[1].public_key(), 2, [3])
    assert bfv._rust_time_multiply(y, w, rlks, 2) > 0
    assert bfv._rust_time_multiply(y, w, bfv.SharedRelinKey(rlks[:2]), 2, grouped=False) > 0
    # While a long multiply loop runs in Rust on another thread, this thread keeps running.
    window = {}

    def work():
        window["start"] = time.perf_counter()
        bfv._rust_time_multiply(x, x, keys.relin_key, 400)
        window["end"] = time.perf_counter()

    th = threading.Thread(target=work)
    stamps = []
    th.start()
    while th.is_alive():
        stamps.append(time.perf_counter())
        time.sleep(0.001)
    th.join()
    inside = [s for s in stamps if window["start"] + 0.01 < s < window["end"] - 0.01]
    assert inside, "the GIL was held during the Rust call"


def test_package_exports():
    assert coterie.bfv is bfv
    for name in bfv.__all__:
        assert getattr(bfv, name).__doc__, name
    assert "insecure" in bfv.Params.names()[-1]
