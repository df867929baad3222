"""Tests of coterie.tfhe: single-key and multi-key TFHE against plain Python arithmetic.

Most tests use the crate's insecure toy parameter sets (fast); one single-key and one multi-key
test run at real parameters (seed 003's k = 2 sets, about 100 bits)."""

import ast
import itertools
import pathlib
import threading
import time

import pytest

import coterie
from coterie import tfhe
from coterie import CoterieError

PY_GATES = {
    "nand": lambda a, b: not (a and b),
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "nor": lambda a, b: not (a or b),
    "xor": lambda a, b: a != b,
    "xnor": lambda a, b: a == b,
}
METHOD = {"nand": "nand", "and": "and_", "or": "or_", "nor": "nor", "xor": "xor", "xnor": "xnor"}
BITS = [(False, False), (False, True), (True, False), (True, True)]


@pytest.fixture(scope="module")
def toy():
    ck = tfhe.ClientKey(tfhe.TfheParams.insecure_toy_u32())
    return ck, tfhe.ServerKey(ck)


@pytest.fixture(scope="module")
def mk2():
    params = tfhe.MkParams.insecure_toy(2)
    keys, ek = tfhe.insecure_simulate_all_parties(params, 2, tfhe.Crs(bytes(range(32))))
    return params, keys, ek, tfhe.MkServerKey(ek)


# ------------------------------------------------------------------------------------------------
# Single key
# ------------------------------------------------------------------------------------------------


def test_parameter_sets_by_name():
    names = tfhe.TfheParams.names()
    assert names == [
        "tfhe_rs_boolean_default",
        "tfhe_rs_shortint_2_2_gaussian",
        "seed003_ako_k2_single_key",
        "seed003_ako_k16_single_key",
        "insecure_toy_u32",
    ]
    for name in names:
        p = tfhe.TfheParams.named(name)
        assert p.name == name
        assert p == getattr(tfhe.TfheParams, name)()
        assert tfhe.TfheParams.from_bytes(p.to_bytes()) == p
        assert p.big_lwe_dimension == p.glwe_dimension * p.polynomial_size
    d = tfhe.TfheParams.tfhe_rs_boolean_default()
    assert (d.lwe_dimension, d.glwe_dimension, d.polynomial_size, d.torus_bits) == (805, 3, 512, 32)
    assert (d.pbs_base_log, d.pbs_level, d.ks_base_log, d.ks_level) == (10, 2, 3, 5)
    assert d.glwe_key == "binary" and d.ternary_p is None and d.security_bits == 128
    a = tfhe.TfheParams.seed003_ako_k2_single_key()
    assert a.glwe_key == "ternary" and a.ternary_p == pytest.approx(0.113546)
    assert a.lwe_noise_std == pytest.approx(2 ** -13.52)
    toy = tfhe.TfheParams.insecure_toy_u32()
    assert toy.security_bits == 0 and toy.torus_bits == 32 and toy.lwe_dimension == 64
    assert "insecure_toy_u32" in repr(toy)
    with pytest.raises(ValueError, match="unknown parameter set"):
        tfhe.TfheParams.named("toy")


def test_truth_tables_of_every_gate(toy):
    ck, sk = toy
    assert tfhe.GATES == ("nand", "and", "or", "nor", "xor", "xnor")
    for name, f in PY_GATES.items():
        for a, b in BITS:
            for _ in range(2):
                ca, cb = ck.encrypt(a), ck.encrypt(b)
                c = sk.gate(name, ca, cb)
                assert ck.decrypt(c) == f(a, b), (name, a, b)
                assert getattr(sk, METHOD[name])(ca, cb) == c  # deterministic, same gate
    assert ck.decrypt(sk.gate("NAND", ck.encrypt(True), ck.encrypt(True))) is False
    for a in (False, True):
        assert ck.decrypt(ck.encrypt(a)) == a
        assert ck.decrypt(sk.not_(ck.encrypt(a))) == (not a)
    for c, a, b in itertools.product((False, True), repeat=3):
        out = sk.mux(ck.encrypt(c), ck.encrypt(a), ck.encrypt(b))
        assert ck.decrypt(out) == (a if c else b), (c, a, b)
    # A chain of gates keeps working (each output is bootstrapped).
    acc = ck.encrypt(True)
    for _ in range(20):
        acc = sk.nand(acc, ck.encrypt(True))
    assert ck.decrypt(acc) is True  # 20 negations of True


@pytest.mark.parametrize(
    "x,y",
    [(0, 0), (1, 0), (0, 1), (5, 3), (3, 5), (77, 77), (255, 0), (0, 255), (128, 127), (200, 201)],
)
def test_greater_than_matches_python(toy, x, y):
    ck, sk = toy
    bx, by = ck.encrypt_uint(x, 8), ck.encrypt_uint(y, 8)
    assert len(bx) == 8 and [ck.decrypt(b) for b in bx] == [bool(x >> i & 1) for i in range(8)]
    assert ck.decrypt_uint(bx) == x
    assert ck.decrypt(sk.greater_than(bx, by)) == (x > y)


def test_one_bit_comparison_and_uint_round_trip(toy):
    ck, sk = toy
    for x, y in BITS:
        assert ck.decrypt(sk.greater_than([ck.encrypt(x)], [ck.encrypt(y)])) == (x > y)
    v = (1 << 64) - 3
    assert ck.decrypt_uint(ck.encrypt_uint(v, 64)) == v


def test_lookup_tables(toy):
    ck, sk = toy
    table = [(3 * m + 1) % 4 for m in range(4)]
    for m in range(4):
        ct = ck.encrypt_message(m, 2)
        assert ck.decrypt_message(ct, 2) == m
        assert ck.decrypt_message(sk.apply_lut(ct, table), 2) == table[m]
    # Entries are taken mod 2^bits, as in Rust.
    assert ck.decrypt_message(sk.apply_lut(ck.encrypt_message(1, 1), [7, 6]), 1) == 0


def test_real_parameters_seed003_k2_single_key(toy):
    p = tfhe.TfheParams.seed003_ako_k2_single_key()
    ck = tfhe.ClientKey(p)
    sk = tfhe.ServerKey(ck)
    assert ck.params == p and sk.params == p
    for a, b in BITS:
        c = sk.nand(ck.encrypt(a), ck.encrypt(b))
        assert c.torus_bits == 64 and c.dimension == 520
        assert ck.decrypt(c) == (not (a and b))
    # A ciphertext of the 32-bit toy set is refused by this 64-bit key, and conversely.
    toy_ck, toy_sk = toy
    with pytest.raises(ValueError, match="32-bit torus, the key on a 64-bit"):
        sk.nand(ck.encrypt(True), toy_ck.encrypt(True))
    with pytest.raises(ValueError, match="torus"):
        toy_ck.decrypt(ck.encrypt(True))


def test_gil_is_released_during_evaluation():
    ck = tfhe.ClientKey(tfhe.TfheParams.seed003_ako_k2_single_key())
    sk = tfhe.ServerKey(ck)
    x, y = ck.encrypt_uint(100, 8), ck.encrypt_uint(99, 8)
    started, out = threading.Event(), {}

    def work():
        started.set()
        t0 = time.perf_counter()
        out["ct"] = sk.greater_than(x, y)
        out["seconds"] = time.perf_counter() - t0

    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    last, max_gap = time.perf_counter(), 0.0
    while worker.is_alive():
        now = time.perf_counter()
        max_gap, last = max(max_gap, now - last), now
    worker.join()
    assert ck.decrypt(out["ct"]) is True
    # With the GIL held, this thread would stall for the whole Rust call.
    assert max_gap < out["seconds"] / 2, (max_gap, out["seconds"])


def test_single_key_serialization_round_trips(toy):
    ck, sk = toy
    ct = ck.encrypt(True)
    back = tfhe.Ciphertext.from_bytes(ct.to_bytes())
    assert back == ct and back != ck.encrypt(True)
    assert (back.torus_bits, back.dimension) == (32, 64)
    ck2 = tfhe.ClientKey.from_bytes(ck.to_bytes())
    assert ck2.params == ck.params
    sk_bytes = sk.to_bytes()
    sk2 = tfhe.ServerKey.from_bytes(sk_bytes)
    assert sk2.to_bytes() == sk_bytes
    for a, b in BITS:
        assert ck2.decrypt(sk2.and_(ck.encrypt(a), ck2.encrypt(b))) == (a and b)
    # 64-bit ciphertexts and keys come back with their width.
    p64 = tfhe.TfheParams.seed003_ako_k2_single_key()
    ck64 = tfhe.ClientKey(p64)
    c64 = ck64.encrypt(False)
    assert tfhe.Ciphertext.from_bytes(c64.to_bytes()) == c64
    assert tfhe.ClientKey.from_bytes(ck64.to_bytes()).decrypt(c64) is False


def test_malformed_bytes_raise(toy):
    ck, sk = toy
    ct_bytes = ck.encrypt(True).to_bytes()
    for bad in [b"", b"\x00" * 3, b"garbage" * 10, ct_bytes[:-1], ct_bytes + b"\x00"]:
        for cls in (tfhe.Ciphertext, tfhe.ClientKey, tfhe.ServerKey, tfhe.TfheParams):
            with pytest.raises(CoterieError):
                cls.from_bytes(bad)
    for i in range(len(ct_bytes)):
        flipped = bytearray(ct_bytes)
        flipped[i] ^= 0x5A
        try:  # never a crash; a flipped payload byte may still decode
            tfhe.Ciphertext.from_bytes(bytes(flipped))
        except CoterieError:
            pass
    # Kind confusion: bytes of one type are refused by another.
    with pytest.raises(CoterieError, match="expected"):
        tfhe.ServerKey.from_bytes(ck.to_bytes())
    with pytest.raises(CoterieError):
        tfhe.Ciphertext.from_bytes(ck.params.to_bytes())
    with pytest.raises(TypeError):
        tfhe.Ciphertext.from_bytes("not bytes")


def test_single_key_bad_input(toy):
    ck, sk = toy
    t = ck.encrypt(True)
    with pytest.raises(TypeError):
        ck.encrypt(1)
    with pytest.raises(TypeError):
        ck.decrypt(True)
    with pytest.raises(TypeError):
        sk.nand(t, "x")
    with pytest.raises(ValueError, match="unknown gate"):
        sk.gate("nandx", t, t)
    # A ciphertext of another parameter set (same torus width, other dimension).
    other = tfhe.ClientKey(tfhe.TfheParams.tfhe_rs_boolean_default()).encrypt(True)
    assert other.dimension == 805
    with pytest.raises(CoterieError, match="LWE dimension 805, expected 64"):
        sk.nand(t, other)
    with pytest.raises(ValueError, match="dimension 805"):
        ck.decrypt(other)
    with pytest.raises(ValueError, match="equal non-zero widths"):
        sk.greater_than(ck.encrypt_uint(1, 2), ck.encrypt_uint(1, 3))
    with pytest.raises(ValueError, match="equal non-zero widths"):
        sk.greater_than([], [])
    with pytest.raises(ValueError, match="does not fit in 4 bits"):
        ck.encrypt_uint(16, 4)
    for width in (0, 65):
        with pytest.raises(ValueError, match="width"):
            ck.encrypt_uint(0, width)
    with pytest.raises(OverflowError):
        ck.encrypt_uint(-1, 8)
    with pytest.raises(ValueError, match="between 1 and 64"):
        ck.decrypt_uint([])
    with pytest.raises(ValueError, match="power of two"):
        sk.apply_lut(ck.encrypt_message(0, 2), [0, 1, 2])
    with pytest.raises(CoterieError, match="does not fit N"):
        sk.apply_lut(ck.encrypt_message(0, 2), list(range(256)))
    with pytest.raises(ValueError, match="message width"):
        ck.encrypt_message(0, 0)


# ------------------------------------------------------------------------------------------------
# Multi key
# ------------------------------------------------------------------------------------------------


def test_mk_parameter_sets():
    p = tfhe.MkParams.ako(2)
    assert (p.parties, p.lwe_dimension, p.polynomial_size, p.pbs_base_log, p.pbs_level) == (
        2, 520, 1024, 7, 2,
    )
    assert p.security_bits == pytest.approx(99.9) and p.lwe_noise_log2 == -13.52
    # Spec 5.1 / Table 3 figures for k = 2.
    nb = p.noise()
    assert nb["v0"] == pytest.approx(4.693e-4, rel=2e-3)
    assert nb["kappa"] == pytest.approx(4.036, abs=2e-3)
    assert p.key_bytes() / 1e9 == pytest.approx(0.081, abs=1e-3)
    assert p.noise(k=1)["v0"] < nb["v0"]
    assert tuple(tfhe.TABLE3_PARTIES) == (2, 3, 4, 5, 8, 16, 32, 64, 128, 256, 512)
    assert [tfhe.MkParams.ako(k).parties for k in tfhe.TABLE3_PARTIES] == list(tfhe.TABLE3_PARTIES)
    assert tfhe.MkParams.ako_at_least(6).parties == 8
    with pytest.raises(CoterieError, match="Table 3 has no"):
        tfhe.MkParams.ako(6)
    with pytest.raises(CoterieError):
        tfhe.MkParams.ako_at_least(513)
    toy = tfhe.MkParams.insecure_toy(3)
    assert toy.name == "insecure_toy_k3" and toy.security_bits == 0 and toy.parties == 3
    with pytest.raises(CoterieError, match="party count"):
        tfhe.MkParams.insecure_toy(0)
    assert tfhe.MkParams.from_bytes(p.to_bytes()) == p
    with pytest.raises(ValueError, match="party count"):
        p.noise(k=0)


def test_mk_truth_tables_with_joint_decryption(mk2):
    params, keys, ek, server = mk2
    assert server.parties == [0, 1] and server.lwe_dimension == 2 * params.lwe_dimension
    sigma = tfhe.default_smudging_std(params, 2)
    assert sigma > 0
    for name, f in PY_GATES.items():
        for a, b in BITS:
            ca = tfhe.embed(keys[0].encrypt_bool(a), 0, 2)
            cb = tfhe.embed(keys[1].encrypt_bool(b), 1, 2)
            c = getattr(server, METHOD[name])(ca, cb)
            want = f(a, b)
            assert tfhe.decrypt_bool_with_all_keys(keys, c) == want, (name, a, b)
            if name == "nand":
                partials = [keys[q].partial_decrypt(c) for q in range(2)]
                assert [p.slot for p in partials] == [0, 1]
                bit, phase = tfhe.combine_partial_decryptions(c, 2, partials)
                assert bit == want and 0 <= phase < 2**32
                assert tfhe.joint_decrypt_in_process(keys, c, sigma) == want
                assert server.gate(name, ca, cb) == c  # bootstrapping is deterministic
    t = server.trivial(True)
    assert tfhe.joint_decrypt_in_process(keys, server.not_(t)) is False
    assert tfhe.joint_decrypt_in_process(keys, server.bootstrap(t)) is True


def test_mk_trivial_ciphertext_phase_is_one_eighth(mk2):
    # A trivial ciphertext has zero masks: with no smudging every partial decryption is 0 and
    # the combined phase is the body, 1/8 of the 32-bit torus for true.
    params, keys, ek, server = mk2
    t = server.trivial(True)
    partials = [k.partial_decrypt(t, sigma=0.0) for k in keys]
    assert [p.value for p in partials] == [0, 0]
    assert tfhe.combine_partial_decryptions(t, 2, partials) == (True, 1 << 29)
    f = server.trivial(False)
    assert tfhe.combine_partial_decryptions(f, 2, [tfhe.PartialDecryption(s, 0) for s in (1, 0)]) == (
        False,
        2**32 - (1 << 29),
    )


@pytest.mark.parametrize("x,y", [(200, 13), (13, 200), (77, 77), (0, 255), (255, 0), (128, 127)])
def test_mk_greater_than_with_joint_decryption(mk2, x, y):
    params, keys, ek, server = mk2
    bx = keys[0].encrypt_uint(x, 8, k=2)  # party 0's integer
    by = keys[1].encrypt_uint(y, 8, k=2)  # party 1's integer
    assert tfhe.joint_decrypt_uint_in_process(keys, bx) == x
    assert tfhe.joint_decrypt_in_process(keys, server.greater_than(bx, by)) == (x > y)


def test_mk_stepwise_keygen_three_parties_with_progress():
    params = tfhe.MkParams.insecure_toy(3)
    crs = tfhe.Crs()
    parties = [tfhe.MkSecretKey(params, q) for q in range(3)]
    assert [p.party for p in parties] == [0, 1, 2] and parties[0].params == params
    pk = tfhe.combine_public_key(params, crs, [p.public_key_share(crs) for p in parties])
    events = []
    bsk = [
        p.bootstrap_key_share(pk, progress=lambda *e: events.append(e)) for p in parties
    ]
    ksk = [p.keyswitch_key_share() for p in parties]
    assert [s.party for s in bsk] == [0, 1, 2] and [s.party for s in ksk] == [0, 1, 2]
    n = params.lwe_dimension
    for q in range(3):
        mine = [e for e in events if e[0] == f"party {q}: blind-rotate key share"]
        assert mine[0] == (mine[0][0], 0, n) and mine[-1] == (mine[0][0], n, n)
        assert [d for _, d, _ in mine] == sorted(d for _, d, _ in mine)
    ek = tfhe.combine_evaluation_key(params, bsk, ksk)
    assert ek.parties == [0, 1, 2] and ek.params == params and ek.size_bytes > 0
    server = tfhe.MkServerKey(ek)
    # Inputs of parties 0 and 2.
    for a, b in BITS:
        c = server.nand(tfhe.embed(parties[0].encrypt_bool(a), 0, 3),
                        tfhe.embed(parties[2].encrypt_bool(b), 2, 3))
        assert tfhe.joint_decrypt_in_process(parties, c) == (not (a and b))
    # The sum of three party-local encryptions of ±1/8 has phase ±1/8 or ±3/8: the majority.
    for bits in itertools.product((False, True), repeat=3):
        s = tfhe.sum_local_encryptions([p.encrypt_bool(b) for p, b in zip(parties, bits)])
        assert s.dimension == 3 * n
        assert tfhe.decrypt_bool_with_all_keys(parties, s) == (sum(bits) >= 2), bits
        assert tfhe.joint_decrypt_in_process(parties, server.bootstrap(s)) == (sum(bits) >= 2)


def test_mk_real_parameters_ako_k2():
    params = tfhe.MkParams.ako(2)
    keys, ek = tfhe.insecure_simulate_all_parties(params, 2)
    server = tfhe.MkServerKey(ek)
    for a, b in [(True, True), (False, True)]:
        c = server.nand(tfhe.embed(keys[0].encrypt_bool(a), 0, 2),
                        tfhe.embed(keys[1].encrypt_bool(b), 1, 2))
        assert tfhe.joint_decrypt_in_process(keys, c) == (not (a and b))


def test_mk_serialization_round_trips(mk2):
    params, keys, ek, server = mk2
    crs = tfhe.Crs(b"\x07" * 32)
    assert crs.seed == b"\x07" * 32 and tfhe.Crs(crs.seed) == crs and tfhe.Crs() != crs
    pks = keys[0].public_key_share(crs)
    pk = tfhe.combine_public_key(params, crs, [pks, keys[1].public_key_share(crs)])
    bsk, ksk = keys[0].bootstrap_key_share(pk), keys[0].keyswitch_key_share()
    for obj in (params, pks, pk, bsk, ksk, ek):
        back = type(obj).from_bytes(obj.to_bytes())
        assert back == obj, type(obj)
        assert back.to_bytes() == obj.to_bytes()
    c = server.xor(tfhe.embed(keys[0].encrypt_bool(True), 0, 2),
                   tfhe.embed(keys[1].encrypt_bool(True), 1, 2))
    c2 = tfhe.MkCiphertext.from_bytes(c.to_bytes())
    assert c2 == c and c2.dimension == 2 * params.lwe_dimension
    k1 = tfhe.MkSecretKey.from_bytes(keys[1].to_bytes())
    assert k1.party == 1 and k1.params == params
    assert tfhe.joint_decrypt_in_process([keys[0], k1], c2) is False
    server2 = tfhe.MkServerKey(tfhe.MkEvaluationKey.from_bytes(ek.to_bytes()))
    assert tfhe.decrypt_bool_with_all_keys(keys, server2.and_(c2, server2.trivial(True))) is False
    # Malformed and mistyped bytes.
    ek_bytes = ek.to_bytes()
    for bad in [b"", b"CTRE", ek_bytes[:-7], ek_bytes[:100], b"\xff" * 64]:
        with pytest.raises(CoterieError):
            tfhe.MkEvaluationKey.from_bytes(bad)
    with pytest.raises(CoterieError, match="expected"):
        tfhe.MkEvaluationKey.from_bytes(params.to_bytes())
    with pytest.raises(CoterieError):
        tfhe.MkSecretKey.from_bytes(ek_bytes)
    with pytest.raises(CoterieError):
        tfhe.BootstrapKeyShare.from_bytes(ksk.to_bytes())
    with pytest.raises(CoterieError):
        tfhe.MkPublicKey.from_bytes(pks.to_bytes())


def test_mk_bad_input(mk2):
    params, keys, ek, server = mk2
    a = tfhe.embed(keys[0].encrypt_bool(True), 0, 2)
    # Wrong party index / slot.
    with pytest.raises(CoterieError, match="slot"):
        keys[0].partial_decrypt(a, slot=2)
    with pytest.raises(CoterieError, match="slot"):
        tfhe.embed(keys[0].encrypt_bool(True), 2, 2)
    with pytest.raises(ValueError, match="party count"):
        tfhe.embed(keys[0].encrypt_bool(True), 0, 0)
    with pytest.raises(OverflowError):
        tfhe.MkSecretKey(params, -1)
    with pytest.raises(ValueError, match="party index"):
        tfhe.MkSecretKey(params, 10**6)
    p0 = keys[0].partial_decrypt(a)
    with pytest.raises(CoterieError, match="repeated"):
        tfhe.combine_partial_decryptions(a, 2, [p0, p0])
    with pytest.raises(CoterieError, match="one partial per slot"):
        tfhe.combine_partial_decryptions(a, 2, [p0])
    # Ciphertexts of another key set (3 parties) or parameters.
    p3 = tfhe.MkParams.insecure_toy(3)
    keys3, _ = tfhe.insecure_simulate_all_parties(p3, 3)
    c3 = tfhe.embed(keys3[0].encrypt_bool(True), 0, 3)
    with pytest.raises(CoterieError, match="dimension"):
        server.nand(a, c3)
    with pytest.raises(CoterieError, match="dimension"):
        server.greater_than([c3], [c3])
    with pytest.raises(CoterieError, match="different or zero width"):
        server.greater_than([a, a], [a])
    with pytest.raises(ValueError, match="dimension"):
        tfhe.decrypt_bool_with_all_keys(keys, c3)
    with pytest.raises(ValueError, match="no keys"):
        tfhe.decrypt_bool_with_all_keys([], a)
    with pytest.raises(CoterieError, match="different dimensions"):
        tfhe.sum_local_encryptions([keys[0].encrypt_bool(True), a])
    # Key-generation shares out of order, from other parties, of other parameters.
    crs = tfhe.Crs()
    s0, s1 = keys[0].public_key_share(crs), keys[1].public_key_share(crs)
    with pytest.raises(CoterieError, match="increasing order"):
        tfhe.combine_public_key(params, crs, [s1, s0])
    pk = tfhe.combine_public_key(params, crs, [s0, s1])
    b0, b1 = keys[0].bootstrap_key_share(pk), keys[1].bootstrap_key_share(pk)
    k0 = keys[0].keyswitch_key_share()
    with pytest.raises(CoterieError, match="different parties"):
        tfhe.combine_evaluation_key(params, [b0, b1], [k0, k0])
    real = tfhe.MkParams.ako(2)
    with pytest.raises(CoterieError, match="wrong shape"):
        tfhe.combine_evaluation_key(real, [b0, b1], [k0, keys[1].keyswitch_key_share()])
    real_pk = tfhe.combine_public_key(real, crs, [tfhe.MkSecretKey(real, 0).public_key_share(crs)])
    with pytest.raises(ValueError, match="ring degree 1024"):
        keys[0].bootstrap_key_share(real_pk)
    # Wrong types and values.
    with pytest.raises(ValueError, match="32 bytes"):
        tfhe.Crs(b"short")
    with pytest.raises(TypeError):
        keys[0].encrypt_bool(1)
    with pytest.raises(TypeError):
        server.nand(a, tfhe.ClientKey(tfhe.TfheParams.insecure_toy_u32()).encrypt(True))
    with pytest.raises(ValueError, match="unknown gate"):
        server.gate("implies", a, a)
    with pytest.raises(ValueError, match="party count"):
        tfhe.insecure_simulate_all_parties(params, 0)
    with pytest.raises(ValueError, match="does not fit"):
        keys[0].encrypt_uint(300, 8, k=2)
    with pytest.raises(CoterieError, match="noise std"):
        keys[0].partial_decrypt(a, sigma=-1.0)


# ------------------------------------------------------------------------------------------------
# Package surface
# ------------------------------------------------------------------------------------------------


def test_stub_and_docs_cover_the_api():
    stub_path = pathlib.Path(tfhe.__file__).with_suffix(".pyi")
    tree = ast.parse(stub_path.read_text())
    top = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            top[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            top[node.target.id] = node
    assert set(tfhe.__all__) <= set(top), set(tfhe.__all__) - set(top)
    for name in tfhe.__all__:
        obj = getattr(tfhe, name)
        if isinstance(obj, type):
            stub_members = {n.name for n in top[name].body if isinstance(n, ast.FunctionDef)}
            public = {m for m in dir(obj) if not m.startswith("_")}
            assert public <= stub_members, (name, public - stub_members)
            for m in public:
                assert getattr(obj, m).__doc__, f"{name}.{m} has no docstring"
        if callable(obj):
            assert obj.__doc__, f"{name} has no docstring"
    assert coterie.tfhe is tfhe
