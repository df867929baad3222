//! `coterie ... mktfhe` (coterie-tfhe's `mk` module, issue 7): multi-key TFHE key generation,
//! evaluation and joint decryption at one party.
