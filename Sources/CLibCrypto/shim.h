// Thin shim over OpenSSL's libcrypto: the EVP AEAD calls the send and receive paths seal and open records with, in
// place and with a context kept per key (swift-crypto's BoringSSL is not exported, and its API returns a new buffer
// per record).
#ifndef CAMO_CLIBCRYPTO_SHIM_H
#define CAMO_CLIBCRYPTO_SHIM_H
#include <openssl/evp.h>
#endif
