//! Randomized tests of the frame and message decoders: arbitrary and mutated input must give an
//! error value, never a panic or an allocation larger than the input. `PROPTEST_CASES` raises the
//! case count (bench/fuzz-net.sh runs it long).

use coterie_net::Blob;
use coterie_net::frame::{self, FrameKind};
use proptest::prelude::*;

type Msg = (u64, String, Vec<u32>, Blob, Option<i16>);

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = frame::decode_stream(&bytes, 1 << 16);
        if let Ok(f) = frame::decode_frame(&bytes) {
            prop_assert_eq!(f.payload.len(), bytes.len() - frame::HEADER_LEN);
            let _ = frame::decode_abort(f.payload);
            let _ = frame::decode_hello(f.payload);
            let _ = frame::decode_payload::<Msg>(f.payload);
        }
        let _ = frame::decode_payload::<Msg>(&bytes);
        let _ = frame::decode_payload::<Vec<Vec<u64>>>(&bytes);
        if let Ok(p) = frame::into_bytes_payload(bytes.clone()) {
            // what it accepts is exactly a Blob payload
            let blob: Blob = frame::decode_payload(&bytes[frame::HEADER_LEN..]).unwrap();
            prop_assert_eq!(&blob.0, &p);
            // the in-place forms accept the same bodies and give the same bytes
            let q = frame::BytesPayload::from_body(bytes.clone()).unwrap();
            prop_assert_eq!(&q[..], &p[..]);
            let r = frame::BytesPayload::from_payload(bytes[frame::HEADER_LEN..].to_vec()).unwrap();
            prop_assert_eq!(&r[..], &p[..]);
        } else {
            prop_assert!(frame::BytesPayload::from_body(bytes.clone()).is_err());
        }
    }

    #[test]
    fn mutated_frames_are_rejected_or_decode(
        a in any::<u64>(), s in ".{0,20}", v in proptest::collection::vec(any::<u32>(), 0..20),
        blob in proptest::collection::vec(any::<u8>(), 0..64), tag in any::<u32>(),
        pos in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<prop::sample::Index>(),
    ) {
        let msg: Msg = (a, s, v, Blob(blob), Some(3));
        let good = frame::encode_data(tag, &msg, 1 << 16).unwrap();
        // the intact frame decodes to the same value
        let fs = frame::decode_stream(&good, 1 << 16).unwrap();
        prop_assert_eq!(fs.len(), 1);
        prop_assert_eq!(fs[0].kind, FrameKind::Data);
        prop_assert_eq!(fs[0].tag, tag);
        prop_assert_eq!(frame::decode_payload::<Msg>(fs[0].payload).unwrap(), msg);
        // a flipped byte: any outcome but a panic
        let mut bad = good.clone();
        let i = pos.index(bad.len());
        bad[i] ^= byte | 1;
        if let Ok(fs) = frame::decode_stream(&bad, 1 << 16) {
            for f in fs {
                let _ = frame::decode_payload::<Msg>(f.payload);
            }
        }
        // truncation anywhere is an error at the stream level
        let k = cut.index(good.len());
        prop_assert!(frame::decode_stream(&good[..k], 1 << 16).is_err() || k == 0);
        // a tighter bound rejects it as oversized
        prop_assert!(frame::decode_stream(&good, frame::HEADER_LEN - 1).is_err());
    }
}

#[test]
fn huge_announced_lengths_do_not_allocate() {
    // A postcard length prefix announcing 2^60 elements on a tiny input must fail fast.
    let mut b = vec![0xff; 9];
    b.push(0x01);
    assert!(frame::decode_payload::<Vec<u64>>(&b).is_err());
    assert!(frame::decode_payload::<Blob>(&b).is_err());
    assert!(frame::decode_payload::<String>(&b).is_err());
    let pre = (u32::MAX).to_le_bytes();
    assert!(matches!(
        frame::parse_len(pre, 1 << 20),
        Err(frame::FrameError::TooLarge { .. })
    ));
}
