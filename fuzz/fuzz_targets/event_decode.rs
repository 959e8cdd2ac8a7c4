//! Event decoding from arbitrary bytes: an error, never a panic; anything accepted
//! re-encodes to bytes that decode to the same event.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planlog_core::events::Event;

fuzz_target!(|data: &[u8]| {
    if let Ok(event) = Event::decode(data) {
        let again = Event::decode(&event.encode()).expect("a decoded event re-encodes");
        assert_eq!(again, event);
        assert!(event.hash_is_valid());
    }
});
