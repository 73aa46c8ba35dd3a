/**
 * SecretBox (secrets at rest, AES-256-GCM): what is sealed opens again with the same key and row
 * only; another key, any altered byte, another row's context, an unknown version or a truncated
 * value fail with SecretBoxError instead of answering garbage. The key variable accepts exactly
 * 32 bytes (hex or base64) and names itself, never its value, when it refuses one.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { encryptionKeyVar, parseEncryptionKey, SecretBox, SecretBoxError } from './secret-box.js';

const newBox = () => new SecretBox(parseEncryptionKey(randomBytes(32).toString('hex')));
const box = newBox();
const SECRET = randomBytes(32).toString('hex');

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error, but nothing was thrown');
}

function expectRefused(open: () => string) {
  expect(thrown(open)).toBeInstanceOf(SecretBoxError);
}

describe('SecretBox', () => {
  it('opens what it sealed, for any text and row', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string(), (plaintext, context) => {
        expect(box.open(box.seal(plaintext, context), context)).toBe(plaintext);
      }),
    );
  });

  it('stores a versioned value without the plaintext, with a fresh IV each time', () => {
    const first = box.seal(SECRET, 'application:a');
    const second = box.seal(SECRET, 'application:a');
    expect(first).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
    expect(first).not.toContain(SECRET);
    expect(second).not.toBe(first);
    // 12-byte IV + 16-byte tag + the 64 bytes of the secret.
    expect(Buffer.from(first.slice(3), 'base64')).toHaveLength(12 + 16 + 64);
  });

  it('refuses another key', () => {
    const sealed = box.seal(SECRET, 'customer:c');
    expectRefused(() => newBox().open(sealed, 'customer:c'));
  });

  it('refuses a value with any byte altered (IV, tag or ciphertext)', () => {
    const sealed = box.seal(SECRET, 'application:a');
    const bytes = Buffer.from(sealed.slice(3), 'base64');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), (index, flip) => {
        const altered = Buffer.from(bytes);
        altered[index] ^= flip;
        expectRefused(() => box.open(`v1:${altered.toString('base64')}`, 'application:a'));
      }),
    );
  });

  it("refuses a value copied to another row (the row's context differs)", () => {
    const sealed = box.seal(SECRET, 'application:a');
    expectRefused(() => box.open(sealed, 'application:b'));
    expectRefused(() => box.open(sealed, 'customer:a'));
  });

  it('refuses plaintext, an unknown version and a truncated value', () => {
    const sealed = box.seal(SECRET, 'application:a');
    expectRefused(() => box.open(SECRET, 'application:a'));
    expectRefused(() => box.open(`v2:${sealed.slice(3)}`, 'application:a'));
    expectRefused(() => box.open(sealed.slice(0, 20), 'application:a'));
    expectRefused(() => box.open('v1:', 'application:a'));
  });
});

describe('the encryption key variable', () => {
  const spec = { SECRETS_ENCRYPTION_KEY: encryptionKeyVar('Key that encrypts secrets at rest') };

  it('accepts 32 bytes as 64 hex characters or as base64, the same key either way', () => {
    const raw = randomBytes(32);
    const fromHex = new SecretBox(parseEncryptionKey(raw.toString('hex')));
    const fromBase64 = new SecretBox(parseEncryptionKey(raw.toString('base64')));
    expect(fromBase64.open(fromHex.seal(SECRET, 'customer:c'), 'customer:c')).toBe(SECRET);
    expect(loadConfig(spec, { SECRETS_ENCRYPTION_KEY: raw.toString('hex').toUpperCase() }).SECRETS_ENCRYPTION_KEY.symmetricKeySize).toBe(32);
  });

  it.each([
    ['31 bytes of hex', randomBytes(31).toString('hex')],
    ['33 bytes of hex', randomBytes(33).toString('hex')],
    ['16 bytes of base64', randomBytes(16).toString('base64')],
    ['base64 without its padding', randomBytes(32).toString('base64').replace(/=+$/, '')],
    ['base64url', Buffer.alloc(32, 0xff).toString('base64url')],
    ['a passphrase', 'correct horse battery staple correct horse battery'],
    ['a placeholder', 'CHANGE-ME-secrets-encryption-key-openssl-rand-hex-32'],
  ])('refuses %s, naming the variable and not echoing the value', (_what, value) => {
    const error = thrown(() => loadConfig(spec, { SECRETS_ENCRYPTION_KEY: value }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('SECRETS_ENCRYPTION_KEY is invalid: must be a 32-byte key');
    expect(error.message).not.toContain(value);
  });

  it('is required', () => {
    expect(thrown(() => loadConfig(spec, {})).message).toContain('SECRETS_ENCRYPTION_KEY is required');
  });

  it('prints as nothing when a config holding it is serialised', () => {
    const { SECRETS_ENCRYPTION_KEY: key } = loadConfig(spec, { SECRETS_ENCRYPTION_KEY: 'ab'.repeat(32) });
    expect(JSON.stringify({ key })).not.toMatch(/ab|q6/i);
  });
});
