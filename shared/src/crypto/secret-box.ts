/**
 * Secrets at rest: AES-256-GCM with a random 12-byte IV per value. The stored form names its
 * version (`v1:<base64 of iv | tag | ciphertext>`) so that the algorithm or the key can rotate
 * later, and each value is bound to its row by additional authenticated data (e.g.
 * `application:<id>`): a value copied to another row, altered, or read with another key does not
 * open, it fails.
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { VarSpec } from '../config.js';

const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stored value that does not open: another key, altered bytes, another row, or not sealed at all. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/**
 * A 32-byte key given as 64 hex characters or as standard base64 (`openssl rand -hex 32`,
 * `openssl rand -base64 32`). A KeyObject, so that the key prints as nothing if a config is logged.
 */
export function parseEncryptionKey(raw: string): KeyObject {
  const hex = /^[0-9a-f]{64}$/i.test(raw);
  const bytes = Buffer.from(raw, hex ? 'hex' : 'base64');
  // Buffer.from skips characters that are not base64: only a value that encodes back exactly is one.
  if (bytes.length !== KEY_BYTES || (!hex && bytes.toString('base64') !== raw))
    throw new Error('must be a 32-byte key: 64 hex characters or base64 (openssl rand -hex 32)');
  return createSecretKey(bytes);
}

/** A required config variable holding the key that encrypts secrets at rest. */
export function encryptionKeyVar(description: string): VarSpec<KeyObject> {
  return { description, parse: parseEncryptionKey };
}

export class SecretBox {
  constructor(private readonly key: KeyObject) {}

  /** Encrypts `plaintext` for the row `context` names (e.g. `application:<id>`). */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
  }

  /** The plaintext of a sealed value of the row `context` names; throws SecretBoxError otherwise. */
  open(sealed: string, context: string): string {
    const separator = sealed.indexOf(':');
    if (separator < 0 || sealed.slice(0, separator) !== VERSION) throw new SecretBoxError('not a sealed value of a known version');
    const bytes = Buffer.from(sealed.slice(separator + 1), 'base64');
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('sealed value too short');
    const decipher = createDecipheriv(ALGORITHM, this.key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('sealed value does not open: another key, altered, or sealed for another row');
    }
  }
}
