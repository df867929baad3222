//! Wire framing: every frame is a 4-byte little-endian length followed by that many bytes of body.
//!
//! Body layout (format version [`WIRE_VERSION`]):
//!
//! | bytes  | field                                                       |
//! |--------|-------------------------------------------------------------|
//! | 0      | wire version                                                |
//! | 1      | kind: 0 data, 1 abort, 2 bye (normal close), 3 hello        |
//! | 2..10  | sequence number on this directed link, u64 LE               |
//! | 10..14 | tag chosen by the protocol, u32 LE                          |
//! | 14..   | payload: a postcard-encoded serde value                     |
//!
//! Decoders here never panic and never allocate more than their input: they are the targets of the
//! fuzz harness (`crates/net/fuzz`) and of the randomized tests.

use serde::{Deserialize, Serialize};

/// Version of the frame layout; a frame with another version is rejected.
pub const WIRE_VERSION: u8 = 1;
/// Length of the length prefix.
pub const LEN_PREFIX: usize = 4;
/// Length of the fixed body header (version, kind, seq, tag).
pub const HEADER_LEN: usize = 14;
/// Default bound on a frame body (64 MiB); see [`crate::MeshOptions::max_frame`].
pub const DEFAULT_MAX_FRAME: usize = 64 << 20;
/// Bound on the reason text of an abort.
pub const MAX_REASON: usize = 4096;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A protocol message.
    Data = 0,
    /// An abort notice ([`AbortNotice`]).
    Abort = 1,
    /// The sender closes the session normally; nothing follows.
    Bye = 2,
    /// Connection set-up ([`Hello`]).
    Hello = 3,
}

impl FrameKind {
    fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            0 => FrameKind::Data,
            1 => FrameKind::Abort,
            2 => FrameKind::Bye,
            3 => FrameKind::Hello,
            _ => return None,
        })
    }
}

/// Why a frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The body is shorter than the fixed header.
    #[error("truncated frame: {0} bytes, header needs {HEADER_LEN}")]
    Truncated(usize),
    /// Unknown wire version.
    #[error("unsupported wire version {0} (this build speaks {WIRE_VERSION})")]
    Version(u8),
    /// Unknown frame kind.
    #[error("unknown frame kind {0}")]
    Kind(u8),
    /// The length prefix exceeds the bound.
    #[error("frame length {len} exceeds the limit {max}")]
    TooLarge {
        /// Announced length.
        len: u64,
        /// Limit.
        max: usize,
    },
    /// A stream ended in the middle of a frame.
    #[error("stream ends inside a frame ({0} bytes left over)")]
    TrailingBytes(usize),
    /// A control payload (abort, hello) is invalid.
    #[error("bad control payload: {0}")]
    Payload(String),
}

/// A decoded frame body, borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRef<'a> {
    /// Kind of frame.
    pub kind: FrameKind,
    /// Per-link sequence number.
    pub seq: u64,
    /// Protocol tag.
    pub tag: u32,
    /// Payload bytes.
    pub payload: &'a [u8],
}

/// Abort notice: who raised the abort and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortNotice {
    /// Party that raised the abort.
    pub origin: u32,
    /// Reason text (at most [`MAX_REASON`] bytes).
    pub reason: String,
    /// `true` when this relays that `origin` crashed (its connection broke), rather than an abort
    /// `origin` raised itself.
    pub disconnected: bool,
}

/// First frame on a new connection, sent by the dialer and answered by the acceptor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Sender's party id.
    pub from: u32,
    /// Intended receiver's party id.
    pub to: u32,
    /// Number of parties the sender believes in.
    pub n: u32,
    /// Digest of the party configuration (ids, certificates, CA) as the sender sees it.
    pub config_digest: [u8; 32],
}

/// A byte string that serializes as one postcard byte string (length + raw bytes) rather than as a
/// sequence of `u8` values: use it for bulk payloads (packed polynomials, ciphertexts). The same
/// encoding as a `Vec<u8>` field with `#[serde(with = "coterie_base::bytes")]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

impl Serialize for Blob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        coterie_base::bytes::serialize(&self.0, s)
    }
}

impl<'de> Deserialize<'de> for Blob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        coterie_base::bytes::deserialize(d).map(Blob)
    }
}

/// Parses the 4-byte length prefix and checks it against `max`.
pub fn parse_len(prefix: [u8; LEN_PREFIX], max: usize) -> Result<usize, FrameError> {
    let len = u32::from_le_bytes(prefix) as u64;
    if len > max as u64 {
        return Err(FrameError::TooLarge { len, max });
    }
    if len < HEADER_LEN as u64 {
        return Err(FrameError::Truncated(len as usize));
    }
    Ok(len as usize)
}

/// Decodes one frame body (without its length prefix).
pub fn decode_frame(body: &[u8]) -> Result<FrameRef<'_>, FrameError> {
    let Some((head, payload)) = body.split_first_chunk::<HEADER_LEN>() else {
        return Err(FrameError::Truncated(body.len()));
    };
    if head[0] != WIRE_VERSION {
        return Err(FrameError::Version(head[0]));
    }
    let kind = FrameKind::from_u8(head[1]).ok_or(FrameError::Kind(head[1]))?;
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&head[2..10]);
    let mut tag = [0u8; 4];
    tag.copy_from_slice(&head[10..14]);
    Ok(FrameRef {
        kind,
        seq: u64::from_le_bytes(seq),
        tag: u32::from_le_bytes(tag),
        payload,
    })
}

/// Splits a byte stream into frames; errors on a bad prefix, a bad body, or a partial last frame.
pub fn decode_stream(mut bytes: &[u8], max: usize) -> Result<Vec<FrameRef<'_>>, FrameError> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let Some((prefix, rest)) = bytes.split_first_chunk::<LEN_PREFIX>() else {
            return Err(FrameError::TrailingBytes(bytes.len()));
        };
        let len = parse_len(*prefix, max)?;
        if rest.len() < len {
            return Err(FrameError::TrailingBytes(bytes.len()));
        }
        let (body, tail) = rest.split_at(len);
        out.push(decode_frame(body)?);
        bytes = tail;
    }
    Ok(out)
}

/// Starts a frame: length prefix (filled in by [`finish_frame`]) plus header with sequence 0.
pub fn start_frame(kind: FrameKind, tag: u32, payload_hint: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(LEN_PREFIX + HEADER_LEN + payload_hint);
    v.extend_from_slice(&[0u8; LEN_PREFIX]);
    v.push(WIRE_VERSION);
    v.push(kind as u8);
    v.extend_from_slice(&0u64.to_le_bytes());
    v.extend_from_slice(&tag.to_le_bytes());
    v
}

/// Writes the length prefix of a frame built with [`start_frame`]; errors if it exceeds `max`.
pub fn finish_frame(frame: &mut [u8], max: usize) -> Result<(), FrameError> {
    let body = frame.len().saturating_sub(LEN_PREFIX);
    if body > max || body > u32::MAX as usize {
        return Err(FrameError::TooLarge {
            len: body as u64,
            max,
        });
    }
    frame[..LEN_PREFIX].copy_from_slice(&(body as u32).to_le_bytes());
    Ok(())
}

/// Sets the sequence number of a complete frame (with prefix).
pub fn set_seq(frame: &mut [u8], seq: u64) {
    if frame.len() >= LEN_PREFIX + HEADER_LEN {
        frame[LEN_PREFIX + 2..LEN_PREFIX + 10].copy_from_slice(&seq.to_le_bytes());
    }
}

/// Encodes a serde value as a complete data frame (prefix included, sequence 0).
pub fn encode_data<T: Serialize + ?Sized>(
    tag: u32,
    msg: &T,
    max: usize,
) -> Result<Vec<u8>, crate::Error> {
    let v = start_frame(FrameKind::Data, tag, 64);
    let mut v = postcard::to_extend(msg, v).map_err(|e| crate::Error::Encode(e.to_string()))?;
    finish_frame(&mut v, max).map_err(|e| crate::Error::Encode(e.to_string()))?;
    Ok(v)
}

/// Encodes a control frame (abort, hello) with a serde payload.
pub fn encode_control<T: Serialize>(kind: FrameKind, msg: &T) -> Result<Vec<u8>, FrameError> {
    let v = start_frame(kind, 0, 64);
    let mut v = postcard::to_extend(msg, v).map_err(|e| FrameError::Payload(e.to_string()))?;
    finish_frame(&mut v, usize::MAX).map_err(|e| FrameError::Payload(e.to_string()))?;
    Ok(v)
}

/// Encodes a `Bye` frame.
pub fn encode_bye() -> Vec<u8> {
    let mut v = start_frame(FrameKind::Bye, 0, 0);
    let _ = finish_frame(&mut v, usize::MAX);
    v
}

/// Decodes the payload of an abort frame, bounding the reason.
pub fn decode_abort(payload: &[u8]) -> Result<AbortNotice, FrameError> {
    if payload.len() > MAX_REASON + 16 {
        return Err(FrameError::Payload("abort notice too long".into()));
    }
    let mut a: AbortNotice =
        postcard::from_bytes(payload).map_err(|e| FrameError::Payload(e.to_string()))?;
    let keep = prefix_within(&a.reason, MAX_REASON).len();
    a.reason.truncate(keep);
    Ok(a)
}

/// Decodes the payload of a hello frame.
pub fn decode_hello(payload: &[u8]) -> Result<Hello, FrameError> {
    if payload.len() > 64 {
        return Err(FrameError::Payload("hello too long".into()));
    }
    postcard::from_bytes(payload).map_err(|e| FrameError::Payload(e.to_string()))
}

/// Decodes a data payload into a serde value.
pub fn decode_payload<T: serde::de::DeserializeOwned>(payload: &[u8]) -> Result<T, String> {
    postcard::from_bytes(payload).map_err(|e| e.to_string())
}

/// Starts a data frame whose payload is one byte string of `len` bytes, encoded exactly as
/// postcard encodes a [`Blob`] (LEB128 length, then the bytes), so either side may use [`Blob`] or
/// the byte-string calls. Returns the frame head (prefix, header, length); the `len` bytes follow
/// it on the wire without being copied into it. Errors if the whole body would exceed `max`.
pub fn start_bytes_frame(tag: u32, len: usize, max: usize) -> Result<Vec<u8>, FrameError> {
    let mut v = start_frame(FrameKind::Data, tag, 10);
    push_leb128(&mut v, len as u64);
    let body = v.len() - LEN_PREFIX + len;
    if body > max || body > u32::MAX as usize {
        return Err(FrameError::TooLarge {
            len: body as u64,
            max,
        });
    }
    v[..LEN_PREFIX].copy_from_slice(&(body as u32).to_le_bytes());
    Ok(v)
}

/// Appends `x` as postcard's LEB128 varint (the length prefix of a byte string).
pub(crate) fn push_leb128(v: &mut Vec<u8>, mut x: u64) {
    loop {
        let b = (x & 0x7f) as u8;
        x >>= 7;
        if x == 0 {
            v.push(b);
            break;
        }
        v.push(b | 0x80);
    }
}

/// Where the bytes of the byte string that fills `payload` start (after its LEB128 length);
/// errors unless the payload is exactly one byte string.
fn byte_string_start(payload: &[u8]) -> Result<usize, FrameError> {
    let mut len: u64 = 0;
    let mut used = 0;
    for (i, &b) in payload.iter().enumerate().take(10) {
        len |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            used = i + 1;
            break;
        }
    }
    if used == 0 {
        return Err(FrameError::Payload("bad byte-string length".into()));
    }
    if (payload.len() - used) as u64 != len {
        return Err(FrameError::Payload(format!(
            "byte string of {len} bytes in a payload of {} bytes",
            payload.len() - used
        )));
    }
    Ok(used)
}

/// A received byte string left where it arrived: the buffer it came in and the offset where the
/// string starts, so that reading it costs neither an allocation nor a move. Dereferences to the
/// byte string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BytesPayload {
    buf: Vec<u8>,
    start: usize,
}

impl BytesPayload {
    /// The byte string carried by a received data frame body (header included), as sent with
    /// [`start_bytes_frame`] or as a [`Blob`]. Errors when the payload is not exactly one byte
    /// string.
    pub fn from_body(body: Vec<u8>) -> Result<Self, FrameError> {
        let payload = body
            .get(HEADER_LEN..)
            .ok_or(FrameError::Truncated(body.len()))?;
        let start = HEADER_LEN + byte_string_start(payload)?;
        Ok(Self { buf: body, start })
    }
    /// The byte string as a vector of its own, moved to the front of the buffer it arrived in
    /// (no new allocation).
    pub fn into_vec(mut self) -> Vec<u8> {
        self.buf.drain(..self.start);
        self.buf
    }
    /// The byte string of a bare postcard payload (no frame header) that encodes one [`Blob`].
    pub fn from_payload(payload: Vec<u8>) -> Result<Self, FrameError> {
        let start = byte_string_start(&payload)?;
        Ok(Self {
            buf: payload,
            start,
        })
    }
}

impl std::ops::Deref for BytesPayload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Turns a received data frame body whose payload is one byte string (a [`Blob`] or a frame made
/// with [`start_bytes_frame`]) into that byte string, in place: no new allocation and one move of
/// the bytes. Errors when the payload is not exactly one byte string.
pub fn into_bytes_payload(body: Vec<u8>) -> Result<Vec<u8>, FrameError> {
    BytesPayload::from_body(body).map(BytesPayload::into_vec)
}

/// The reason text an abort notice carries to the peers: [`redact_paths`], then
/// [`bounded_reason`]. The aborting party keeps the full text for itself.
pub(crate) fn notice_reason(reason: &str) -> String {
    // Cut a long text first (redacting only shortens it, by at most the bytes of its paths'
    // directories), so that the redaction's work stays bounded too.
    bounded_reason(&redact_paths(prefix_within(reason, 4 * MAX_REASON)))
}

/// Replaces every local file path in `text` by `…/` and its last component, so that an abort
/// notice tells the peers which file failed without the directories it lives in (a home
/// directory names a user; a layout names a deployment). A path here is a run of characters
/// starting with `/`, `~/`, `./` or `../` at the start of the text or after a space, a quote, a
/// bracket, `=`, `:` or `,`, and ending before whitespace, a quote, a closing bracket, `,` or
/// `:`, with at least one character after its prefix. Everything else is kept as it is (`1/4`,
/// `kbit/s` and a lone `/` are not paths). A URL (`scheme://…` with a scheme of letters, digits,
/// `+`, `-` or `.`) is kept whole up to whitespace, a quote or a closing bracket, since it names
/// a service rather than a local directory; a `file://` URL's path is redacted like a path.
pub(crate) fn redact_paths(text: &str) -> String {
    const BEFORE: &[char] = &['"', '\'', '`', '(', '[', '{', '<', '=', ':', ','];
    const END: &[char] = &['"', '\'', '`', ')', ']', '}', '>', ',', ':'];
    const URL_END: &[char] = &['"', '\'', '`', ')', ']', '}', '>'];
    // the length of the path prefix `rest` starts with, if any
    let path_prefix = |rest: &str| {
        ["../", "./", "~/", "/"]
            .iter()
            .find(|p| rest.starts_with(**p))
            .map(|p| p.len())
    };
    // the length of the run that `rest` starts with, up to whitespace or one of `end`
    let run = |rest: &str, end: &[char]| {
        rest.find(|c: char| c.is_whitespace() || end.contains(&c))
            .unwrap_or(rest.len())
    };
    let mut out = String::with_capacity(text.len());
    let mut prev: Option<char> = None;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        // `scheme://`: a URL is kept whole; a `file:///` URL keeps `//` and its path is
        // redacted below
        let mut url_path = false;
        if prev == Some(':') && rest.starts_with("//") {
            match out.strip_suffix(':').and_then(url_scheme) {
                Some(sc) if sc.eq_ignore_ascii_case("file") && rest[2..].starts_with('/') => {
                    out.push_str("//");
                    i += 2;
                    url_path = true;
                }
                Some(_) => {
                    let len = run(rest, URL_END);
                    out.push_str(&rest[..len]);
                    prev = rest[..len].chars().last();
                    i += len;
                    continue;
                }
                None => {}
            }
        }
        let rest = &text[i..];
        let at_boundary = url_path || prev.is_none_or(|c| c.is_whitespace() || BEFORE.contains(&c));
        if let Some(p) = path_prefix(rest).filter(|_| at_boundary) {
            let len = run(rest, END);
            // a prefix alone (a lone `/` between words) is not a path
            if len > p {
                let path = &rest[..len];
                let last = path.rsplit('/').next().unwrap_or("");
                out.push_str("…/");
                out.push_str(last);
                prev = path.chars().last();
                i += len;
                continue;
            }
        }
        let c = rest
            .chars()
            .next()
            .expect("i is a char boundary inside text");
        out.push(c);
        prev = Some(c);
        i += c.len_utf8();
    }
    out
}

/// The URL scheme that `before` (the text up to a `:` followed by `//`) ends with: its last run
/// of ASCII letters, digits, `+`, `-` and `.`, when that run starts with a letter and is not
/// glued to a longer word.
fn url_scheme(before: &str) -> Option<&str> {
    let start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .map_or(0, |k| {
            k + before[k..].chars().next().map_or(1, char::len_utf8)
        });
    let scheme = &before[start..];
    scheme
        .chars()
        .next()
        .filter(char::is_ascii_alphabetic)
        .map(|_| scheme)
}

/// Truncates a reason text to [`MAX_REASON`] bytes on a character boundary.
pub(crate) fn bounded_reason(reason: &str) -> String {
    prefix_within(reason, MAX_REASON).to_string()
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn prefix_within(text: &str, max: usize) -> &str {
    let mut cut = text.len().min(max);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_frame_round_trip() {
        let f = encode_data(7, &(1u32, "hi".to_string()), DEFAULT_MAX_FRAME).unwrap();
        let frames = decode_stream(&f, DEFAULT_MAX_FRAME).unwrap();
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].kind, FrameKind::Data);
        assert_eq!(frames[0].tag, 7);
        let v: (u32, String) = decode_payload(frames[0].payload).unwrap();
        assert_eq!(v, (1, "hi".to_string()));
    }

    #[test]
    fn rejects_bad_frames() {
        let mut f = encode_data(0, &5u8, DEFAULT_MAX_FRAME).unwrap();
        // truncated stream
        assert!(matches!(
            decode_stream(&f[..f.len() - 1], 1 << 20),
            Err(FrameError::TrailingBytes(_))
        ));
        // oversized length
        assert!(matches!(
            parse_len(u32::MAX.to_le_bytes(), 1 << 20),
            Err(FrameError::TooLarge { .. })
        ));
        assert!(matches!(
            parse_len([3, 0, 0, 0], 1 << 20),
            Err(FrameError::Truncated(3))
        ));
        // bad version, bad kind
        f[LEN_PREFIX] = 9;
        assert_eq!(decode_frame(&f[LEN_PREFIX..]), Err(FrameError::Version(9)));
        f[LEN_PREFIX] = WIRE_VERSION;
        f[LEN_PREFIX + 1] = 200;
        assert_eq!(decode_frame(&f[LEN_PREFIX..]), Err(FrameError::Kind(200)));
        // encoding over the bound fails
        assert!(encode_data(0, &vec![0u8; 100], 50).is_err());
    }

    #[test]
    fn bytes_frames_match_blob_encoding() {
        for len in [0usize, 1, 127, 128, 300, 70_000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let blob = encode_data(5, &Blob(data.clone()), DEFAULT_MAX_FRAME).unwrap();
            let mut parts = start_bytes_frame(5, len, DEFAULT_MAX_FRAME).unwrap();
            parts.extend_from_slice(&data);
            assert_eq!(parts, blob, "len {len}");
            let body = blob[LEN_PREFIX..].to_vec();
            assert_eq!(into_bytes_payload(body).unwrap(), data);
        }
        // a payload that is not one byte string, or has trailing bytes, is refused
        let f = encode_data(0, &(3u8, 4u8), DEFAULT_MAX_FRAME).unwrap();
        assert!(into_bytes_payload(f[LEN_PREFIX..].to_vec()).is_err());
        let mut f = encode_data(0, &Blob(vec![1, 2, 3]), DEFAULT_MAX_FRAME).unwrap();
        f.push(0);
        assert!(into_bytes_payload(f[LEN_PREFIX..].to_vec()).is_err());
        assert!(into_bytes_payload(vec![1; 5]).is_err());
        assert!(into_bytes_payload(vec![1; HEADER_LEN]).is_err());
        let mut f = start_bytes_frame(0, 0, DEFAULT_MAX_FRAME).unwrap();
        f.truncate(LEN_PREFIX + HEADER_LEN);
        f.extend_from_slice(&[0xff; 11]);
        assert!(into_bytes_payload(f[LEN_PREFIX..].to_vec()).is_err());
        assert!(start_bytes_frame(0, 100, 50).is_err());
    }

    #[test]
    fn notices_name_files_without_their_directories() {
        let cases = [
            (
                "store: /home/alice/coterie/p1/gates.bin: No space left on device",
                "store: …/gates.bin: No space left on device",
            ),
            (
                "cannot open \"~/keys/party2.key\" (and ./stores/x/y.ctr)",
                "cannot open \"…/party2.key\" (and …/y.ctr)",
            ),
            ("dir=/var/lib/coterie/, file ../a/b", "dir=…/, file …/b"),
            ("/tmp/x", "…/x"),
            // not paths: fractions, units, words with a slash, a lone slash
            (
                "party 1/4 at 10 kbit/s and/or a / b",
                "party 1/4 at 10 kbit/s and/or a / b",
            ),
            ("é/é and é /é", "é/é and é …/é"),
            // URLs name services, not local directories: kept whole (a port's `:` too)
            (
                "relay https://relay.example.org:8443/v1/peers refused (see http://x.org/a)",
                "relay https://relay.example.org:8443/v1/peers refused (see http://x.org/a)",
            ),
            (
                "s3+tls://bucket/dir/obj: denied",
                "s3+tls://bucket/dir/obj: denied",
            ),
            // ... except a file URL, whose path is redacted
            (
                "key file:///home/alice/k.bin missing",
                "key file://…/k.bin missing",
            ),
            // not URLs: a path after a colon, an empty or non-letter scheme
            (
                "at :/tmp/x and ://y/z and 9://w/v",
                "at :…/x and :…/z and 9:…/v",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact_paths(text), want, "{text}");
        }
        // The notice is redacted, then bounded.
        let long = format!("/secret/dir/{}", "é".repeat(MAX_REASON));
        let r = notice_reason(&long);
        assert!(!r.contains("secret") && r.starts_with("…/é"));
        assert!(r.len() <= MAX_REASON && r.is_char_boundary(r.len()));
    }

    proptest::proptest! {
        /// Any text over the characters that matter (slashes, colons, scheme letters, quotes,
        /// spaces, a multi-byte character) is redacted without a panic, and no text after a
        /// space that starts with `/x/` keeps its directory.
        #[test]
        fn redaction_never_panics(text in "[/:file.~é\" a-]{0,40}") {
            let r = redact_paths(&text);
            let probe = format!("{text} /secret/dir/x");
            proptest::prop_assert!(!redact_paths(&probe).contains("secret"));
            proptest::prop_assert!(r.len() <= 2 * text.len() + 8);
        }
    }

    #[test]
    fn abort_reason_is_bounded() {
        let long = "é".repeat(MAX_REASON);
        let r = bounded_reason(&long);
        assert!(r.len() <= MAX_REASON && r.is_char_boundary(r.len()));
        let a = AbortNotice {
            origin: 3,
            reason: r.clone(),
            disconnected: false,
        };
        let f = encode_control(FrameKind::Abort, &a).unwrap();
        let fr = decode_frame(&f[LEN_PREFIX..]).unwrap();
        assert_eq!(decode_abort(fr.payload).unwrap(), a);
        assert!(decode_abort(&[0xff; 10]).is_err());
    }
}
