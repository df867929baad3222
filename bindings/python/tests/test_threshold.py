"""coterie.threshold against coterie-threshold: a 4-node insecure local service (real TLS meshes
over loopback, in threads of this process) decrypting what the public key encrypts, one and many,
sync, threaded and async; refusals of malformed ciphertexts, of a client certificate from
another CA and of a node certificate from another CA; bad argument types and sizes; the public
key and ciphertext byte formats checked against their documented layouts."""

import asyncio
import random
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from coterie import CoterieError, threshold
from coterie.threshold import Ciphertext, Client, PublicKey

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "threshold_latency.py"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    calls = []
    svc = threshold.start_insecure_local_service(
        tmp_path_factory.mktemp("svc"),
        parties=4,
        decryptions=64,
        pool=8,
        progress=lambda label, done, total: calls.append((label, done, total)),
    )
    svc.dealer_progress = calls
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    """A second service (another CA), started while the first runs: no port collision."""
    svc = threshold.start_insecure_local_service(
        tmp_path_factory.mktemp("other"), parties=2, decryptions=2, pool=0
    )
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def client(service):
    with service.client() as c:
        yield c


def bits(n, seed):
    rng = random.Random(seed)
    return [rng.randrange(2) for _ in range(n)]


def envelope(tag, version, payload):
    """coterie_base::envelope, from its documented layout."""
    return b"CTRE" + tag + struct.pack("<HI", version, len(payload)) + payload


def ctlw(words, k, m):
    """An LWE ciphertext's bytes, from coterie_math::lwe's documented format."""
    payload = bytes([k, m, 0, 0]) + struct.pack("<I", len(words) - 1)
    payload += b"".join(struct.pack("<Q", w) for w in words)
    return envelope(b"LWEc", 1, payload)


# ---- the service ------------------------------------------------------------------------------


def test_service_started_with_dealer_progress_and_a_shared_key(service):
    assert service.running and service.parties == 4
    assert service.config.name == "party.toml" and service.config.is_file()
    assert service.client_cert.is_file() and service.client_key.is_file()
    assert service.node.startswith("127.0.0.1:")
    calls = service.dealer_progress
    assert calls and calls[-1][1] == calls[-1][2] > 0, calls[-3:]
    # every node generated the same key and wrote it; the service's public key is that file
    digests = {line.split("digest ")[1].rstrip(")") for line in service.log if "key ready" in line}
    assert len(digests) == 1
    for i in range(4):
        f = service.directory / "stores" / f"party-{i}" / "public-key.bin"
        assert PublicKey.from_file(f) == service.public_key
    assert any("serving clients on " + service.node in line for line in service.log)


def test_round_trip_many_and_one(service, client):
    msgs = bits(12, 1)
    cts = [threshold.encrypt(service.public_key, m) for m in msgs]
    assert len({bytes(c) for c in cts}) == len(cts), "fresh randomness per encryption"
    assert client.decrypt(cts) == msgs
    assert [client.decrypt_one(c) for c in cts[:2]] == msgs[:2]
    # the method, Ciphertext objects, bytearrays and generators are accepted too
    assert client.decrypt(Ciphertext.from_bytes(c) for c in cts[:3]) == msgs[:3]
    assert client.decrypt([bytearray(service.public_key.encrypt(1))]) == [1]
    assert client.decrypt([]) == []


def test_decrypt_from_threads_and_node_batches(service, client):
    msgs = [bits(3, s) for s in range(4)]
    cts = [[service.public_key.encrypt(m) for m in ms] for ms in msgs]
    before = len(service.batches)
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(client.decrypt, cts))
    assert got == msgs
    runs = service.batches[before:]
    assert sum(n for n, _ in runs) == 12 and all(s > 0 for _, s in runs), runs


def test_async_variants_do_not_block_the_event_loop(service, client):
    msgs = bits(5, 2)
    cts = [service.public_key.encrypt(m) for m in msgs]
    ticks = []

    async def main():
        done = False

        async def ticker():
            while not done:
                ticks.append(time.perf_counter())
                await asyncio.sleep(0.001)

        t = asyncio.ensure_future(ticker())
        r = await asyncio.gather(
            client.decrypt_async(cts[:3]),
            client.decrypt_one_async(cts[3]),
            client.decrypt_results_async([cts[4], b"nope"]),
        )
        done = True
        await t
        return r

    many, one, results = asyncio.run(main())
    assert many == msgs[:3] and one == msgs[3]
    assert results[0] == msgs[4] and isinstance(results[1], CoterieError)
    assert len(ticks) >= 5, "the event loop ran while the decryptions were in flight"


def test_malformed_ciphertexts_are_refused_by_node_0(service, client):
    good = [service.public_key.encrypt(m) for m in (1, 0)]
    wrong_shape = Ciphertext.from_body_last([1, 2, 3], 16, 1)
    got = client.decrypt_results([good[0], b"CTLW but not really", wrong_shape, good[1]])
    assert got[0] == 1 and got[3] == 0
    assert isinstance(got[1], CoterieError)
    assert "ciphertext 1: malformed ciphertext refused" in str(got[1])
    assert "ciphertext 2" in str(got[2]) and "expected (64, 1)" in str(got[2])
    with pytest.raises(CoterieError, match=r"ciphertext 1: malformed ciphertext refused.*\(1 more of 3"):
        client.decrypt([good[0], good[1][:-1], b""])
    with pytest.raises(CoterieError, match=r"malformed ciphertext refused: .*dimension 2, expected 1024"):
        client.decrypt_one(Ciphertext.from_body_last([1, 2, 3], 64, 1))


def test_client_certificate_from_another_ca_is_refused(service, other):
    ct = service.public_key.encrypt(1)
    stranger = Client(service.config, service.node, other.client_cert, other.client_key)
    with pytest.raises(CoterieError, match=r"node 0 at .* refused the connection.*client certificate"):
        stranger.decrypt([ct])
    # node 0's certificate checked against the wrong CA: refused when connecting
    with pytest.raises(CoterieError, match="invalid peer certificate"):
        Client(other.config, service.node, other.client_cert, other.client_key)
    # the other service's own client still works with it
    with other.client() as c:
        assert c.decrypt([other.public_key.encrypt(1)]) == [1]


def test_client_construction_errors(service, tmp_path):
    with pytest.raises(CoterieError, match=r"certificate .*missing\.crt"):
        Client(service.config, service.node, tmp_path / "missing.crt", service.client_key)
    with pytest.raises(CoterieError, match=r"node 0 at 127\.0\.0\.1:1: could not connect"):
        Client(service.config, "127.0.0.1:1", service.client_cert, service.client_key)
    with pytest.raises(CoterieError):
        Client(tmp_path / "none.toml", service.node, service.client_cert, service.client_key)
    with pytest.raises(TypeError):
        Client(service.config, 5, service.client_cert, service.client_key)
    c = service.client()
    with c:
        assert not c.closed
    assert c.closed
    with pytest.raises(CoterieError, match="closed"):
        c.decrypt([service.public_key.encrypt(0)])


def test_bad_arguments(service, client):
    pk = service.public_key
    with pytest.raises(TypeError, match="ciphertext 1: a ciphertext must be bytes, bytearray or Ciphertext, not int"):
        client.decrypt([pk.encrypt(1), 7])
    with pytest.raises(TypeError, match="ciphertext 0: .*not str"):
        client.decrypt(["abc"])
    with pytest.raises(TypeError, match="single ciphertext"):
        client.decrypt(pk.encrypt(1))
    with pytest.raises(TypeError):
        client.decrypt(5)
    with pytest.raises(TypeError, match="not list"):
        client.decrypt_one([pk.encrypt(1)])
    with pytest.raises(ValueError, match="ciphertext 0: 1048576 bytes, over the service's 1048576-byte frame limit"):
        client.decrypt([bytes(1 << 20)])
    with pytest.raises(ValueError, match="frame limit"):
        client.decrypt_one(bytes(1 << 20))
    for bad in (2, -1, 1 << 70):
        with pytest.raises(ValueError, match="message must be 0 or 1"):
            threshold.encrypt(pk, bad)
    with pytest.raises(TypeError, match="message must be an int"):
        pk.encrypt("1")
    with pytest.raises(TypeError):
        threshold.encrypt(b"not a key", 1)
    assert Ciphertext.from_bytes(pk.encrypt(True)).dimension == 1024


def test_local_service_arguments(tmp_path, service):
    for kw, match in [
        (dict(parties=1), "parties must be 2..=16"),
        (dict(parties=17), "parties must be 2..=16"),
        (dict(decryptions=0), "decryptions must be 1..=4096"),
        (dict(decryptions=8, pool=9), r"pool \(9\) exceeds"),
        (dict(decryptions=6, pool=2, chunk=4), r"chunk must divide decryptions \(6\)"),
        (dict(max_batch=0), "max_batch"),
        (dict(lanes=0), "lanes must be 1..=16"),
        (dict(lanes=17), "lanes must be 1..=16"),
        (dict(timeout=-1.0), "timeout must be in"),
    ]:
        with pytest.raises(ValueError, match=match):
            threshold.start_insecure_local_service(tmp_path / "x", **kw)
    with pytest.raises(ValueError, match="certs exists"):
        threshold.start_insecure_local_service(service.directory)
    with pytest.raises(ValueError, match="at most 8 bundles"):
        service.wait_for_pool(9)


def test_lanes_decrypt_concurrent_batches(tmp_path):
    """Two lanes, batches of at most 3: two clients at once each send 6 ciphertexts; every
    answer is right and node 0 decrypted them in several batches (of at most 3)."""
    with threshold.start_insecure_local_service(
        tmp_path, parties=3, decryptions=16, pool=12, max_batch=3, lanes=2
    ) as svc:
        svc.wait_for_pool()
        msgs = [bits(6, 1), bits(6, 2)]
        cts = [[svc.public_key.encrypt(m) for m in ms] for ms in msgs]
        with ThreadPoolExecutor(2) as ex:
            got = list(ex.map(lambda c: svc.client().decrypt(c), cts))
        assert got == msgs
        sizes = [b for b, _ in svc.batches]
        assert sum(sizes) == 12 and max(sizes) <= 3 and len(sizes) >= 4, sizes


def test_stop_material_and_context_manager(tmp_path):
    with threshold.start_insecure_local_service(tmp_path, parties=3, decryptions=2, pool=2) as svc:
        svc.wait_for_pool()
        assert svc.available == 2
        c = svc.client()
        cts = [svc.public_key.encrypt(m) for m in (0, 1, 1)]
        assert c.decrypt(cts[:2]) == [0, 1]
        # the material is spent: the next one is refused, and the pool cannot be refilled
        with pytest.raises(CoterieError, match="no preprocessed gates left"):
            c.decrypt_one(cts[2])
        with pytest.raises(CoterieError, match="material ran out"):
            svc.wait_for_pool(1)
        assert sum(n for n, _ in svc.batches) == 2
    assert not svc.running
    assert sum("stopped" in line for line in svc.log) == 3
    svc.stop()  # twice: nothing happens
    with pytest.raises(CoterieError, match="could not connect"):
        svc.client()
    assert "stopped" in repr(svc)


# ---- formats ----------------------------------------------------------------------------------


def test_public_key_bytes_round_trip_and_layout(service):
    pk = service.public_key
    b = pk.to_bytes()
    assert (service.directory / "stores" / "party-0" / "public-key.bin").read_bytes() == b
    assert PublicKey.from_bytes(b) == pk and PublicKey.from_bytes(b).to_bytes() == b
    # CTPK layout: magic, version, k, n, seed, noise bits, count, bodies
    magic, ver, k, n = struct.unpack_from("<4sBBI", b)
    seed, noise, count = b[10:42], b[42], struct.unpack_from("<I", b, 43)[0]
    # format 2: the secure key, n = 1024 samples of 45-bit noise
    assert (magic, ver, k, n, noise, count) == (b"CTPK", 2, 64, 1024, 45, 1024)
    assert (pk.modulus_bits, pk.dimension, pk.noise_bits, pk.samples) == (64, 1024, 45, 1024)
    assert pk.seed == seed and len(b) == 47 + 8 * 1024
    assert "dimension=1024" in repr(pk)
    with pytest.raises(CoterieError, match="public key: bad header"):
        PublicKey.from_bytes(b"XTPK" + b[4:])
    with pytest.raises(CoterieError, match="public key: fields out of range or wrong length"):
        PublicKey.from_bytes(b[:-1])
    with pytest.raises(CoterieError, match="public key: bad header"):
        PublicKey.from_bytes(b"")
    with pytest.raises(CoterieError, match="No such file"):
        PublicKey.from_file(service.directory / "nope.bin")
    with pytest.raises(TypeError):
        PublicKey.from_bytes("CTPK")
    rng = random.Random(5)
    for _ in range(300):
        bad = bytearray(b[:100] if rng.random() < 0.5 else b)
        for _ in range(rng.randrange(1, 4)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        try:
            PublicKey.from_bytes(bytes(bad))
        except CoterieError:
            pass


def test_ciphertext_format_against_its_documented_layout(service):
    words = [3, 60000, 17, 1 << 15]
    ct = Ciphertext.from_body_last(words, 16, 2)
    assert ct.to_bytes() == ctlw(words, 16, 2)
    assert Ciphertext.from_bytes(ctlw(words, 16, 2)) == ct
    assert (ct.dimension, ct.modulus_bits, ct.message_bits) == (3, 16, 2)
    assert (ct.mask, ct.body, ct.words) == (words[:3], words[3], words)
    assert repr(ct) == "Ciphertext(dimension=3, modulus_bits=16, message_bits=2)"
    with pytest.raises(CoterieError, match=r"\(k, m\) = \(16, 1\), expected \(64, 1\)"):
        Ciphertext.from_body_last(words, 16, 1).check_service_shape()
    # what the public key encrypts has the service's shape
    fresh = Ciphertext.from_bytes(service.public_key.encrypt(1))
    fresh.check_service_shape()
    assert (fresh.dimension, fresh.modulus_bits, fresh.message_bits) == (1024, 64, 1)
    assert fresh.to_bytes() == ctlw(fresh.words, 64, 1)
    # TFHE-rs native modulus: any 64-bit word
    assert Ciphertext.from_body_last([2**64 - 1, 0], 64, 1).body == 0


def test_ciphertext_refusals_never_crash():
    with pytest.raises(CoterieError, match="coefficient not below q"):
        Ciphertext.from_body_last([1 << 16, 3], 16, 2)
    with pytest.raises(CoterieError, match="dimension 0 out of range"):
        Ciphertext.from_body_last([3], 16, 2)
    with pytest.raises(CoterieError, match=r"bad \(k, m\) = \(65, 1\)"):
        Ciphertext.from_body_last([1, 2], 65, 1)
    with pytest.raises(CoterieError, match=r"bad \(k, m\) = \(16, 16\)"):
        Ciphertext.from_body_last([1, 2], 16, 16)
    with pytest.raises(OverflowError):
        Ciphertext.from_body_last([-1, 2], 16, 1)
    with pytest.raises(TypeError):
        Ciphertext.from_body_last("12", 16, 1)
    good = ctlw([1, 2, 3], 16, 2)
    with pytest.raises(CoterieError, match="reserved bytes not zero"):
        Ciphertext.from_bytes(ctlw([1, 2, 3], 16, 2)[:16] + b"\x01" + good[17:])
    with pytest.raises(CoterieError, match="LWEc truncated"):
        Ciphertext.from_bytes(good[:-1])
    with pytest.raises(CoterieError, match="length 24 for dimension 2"):
        Ciphertext.from_bytes(envelope(b"LWEc", 1, good[14:][:-8] + b""))
    with pytest.raises(CoterieError, match="version"):
        Ciphertext.from_bytes(envelope(b"LWEc", 2, good[14:]))
    for cut in range(len(good)):
        with pytest.raises(CoterieError):
            Ciphertext.from_bytes(good[:cut])
    rng = random.Random(7)
    for _ in range(500):
        bad = bytearray(good)
        bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
        try:
            Ciphertext.from_bytes(bytes(bad))
        except CoterieError:
            pass


# ---- the example ------------------------------------------------------------------------------


def test_latency_example_quick(tmp_path):
    out = tmp_path / "latency.png"
    r = subprocess.run(
        [sys.executable, str(EXAMPLE), "--quick", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line.split() for line in r.stdout.splitlines() if line.split()[:1] and line.split()[0].isdigit()]
    assert [int(row[0]) for row in rows] == [1, 2, 4, 8]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tfhe_rs_bincode_ciphertexts_read_like_their_container():
    import struct

    words = [7, 8, 9, (1 << 63) | 5]  # mask a_0..a_2, then the body
    unversioned = struct.pack("<Q", len(words)) + b"".join(struct.pack("<Q", w) for w in words)
    unversioned += (0).to_bytes(16, "little") + struct.pack("<Q", 64)  # q = 2^64 (native)
    want = threshold.Ciphertext.from_body_last(words, 64, 1)
    assert threshold.Ciphertext.from_tfhe_rs(unversioned) == want
    assert threshold.Ciphertext.from_tfhe_rs(unversioned, message_bits=1).to_bytes() == want.to_bytes()
    # versioned: a u32 version index before the value and before the modulus
    versioned = struct.pack("<I", 0) + unversioned[: 8 + 8 * len(words)]
    versioned += struct.pack("<I", 0) + unversioned[8 + 8 * len(words):]
    assert threshold.Ciphertext.from_tfhe_rs(versioned) == want
    with pytest.raises(CoterieError):
        threshold.Ciphertext.from_tfhe_rs(unversioned[:-1])
    with pytest.raises(CoterieError):
        threshold.Ciphertext.from_tfhe_rs(unversioned + b"\0")
    with pytest.raises(CoterieError):
        threshold.Ciphertext.from_tfhe_rs(unversioned, message_bits=64)
    with pytest.raises(TypeError):
        threshold.Ciphertext.from_tfhe_rs("not bytes")
