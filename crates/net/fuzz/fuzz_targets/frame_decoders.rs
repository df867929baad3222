//! Fuzz target: the frame stream decoder and every message decoder behind it.
#![no_main]

use coterie_net::Blob;
use coterie_net::frame;
use libfuzzer_sys::fuzz_target;

type Msg = (u64, String, Vec<u32>, Blob, Option<i16>);

fuzz_target!(|data: &[u8]| {
    if let Ok(frames) = frame::decode_stream(data, 1 << 20) {
        for f in frames {
            let _ = frame::decode_abort(f.payload);
            let _ = frame::decode_hello(f.payload);
            let _ = frame::decode_payload::<Msg>(f.payload);
            let _ = frame::decode_payload::<Vec<Vec<u64>>>(f.payload);
        }
    }
    let _ = frame::into_bytes_payload(data.to_vec());
    let _ = frame::decode_frame(data);
    let _ = frame::decode_payload::<Msg>(data);
});
