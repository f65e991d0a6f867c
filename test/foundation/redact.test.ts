import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets } from '../../src/core/redact.js';

describe('redactSecrets', () => {
  it.each([
    ['an OpenAI key', 'Incorrect API key provided: sk-proj-AbCdEf0123456789xyz.', 'sk-proj-AbCdEf0123456789xyz'],
    ['an Anthropic key', 'key sk-ant-api03-AAAAbbbbCCCCdddd-eeee_ffff was refused', 'sk-ant-api03-AAAAbbbbCCCCdddd-eeee_ffff'],
    ['a bearer token', 'sent header Bearer abc.DEF-123_xyz~9 and failed', 'abc.DEF-123_xyz~9'],
    ['an Authorization header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==\nnext line', 'dXNlcjpwYXNzd29yZA=='],
    ['an x-api-key header', 'request headers: { x-api-key: my-secret-value-42 }', 'my-secret-value-42'],
    ['a JSON api_key field', '{"api_key": "verysecretvalue", "model": "m"}', 'verysecretvalue'],
    ['a JSON apiKey field with escapes', '{"apiKey":"ab\\"cd-secret"}', 'cd-secret'],
    ['a key in a query string', 'GET https://gen.example.com/v1/models?key=AIzaLikeButShort123&alt=json', 'AIzaLikeButShort123'],
    ['an access_token in a query string', 'https://h.example/cb?access_token=tok_live_998877&x=1', 'tok_live_998877'],
    ['credentials in a URL', 'could not reach https://admin:hunter22@gw.example.com/v1', 'hunter22'],
    ['a Google API key', 'API key AIzaSyA-1234567890abcdefghijklmnopqrstu not valid', 'AIzaSyA-1234567890abcdefghijklmnopqrstu'],
    ['a JWT', 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'dozjgNryP4J3jVmNHl0w5N'],
  ])('removes %s', (_label, text, secret) => {
    const out = redactSecrets(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
  });

  it('keeps the words around a secret, so the message still says what went wrong', () => {
    expect(redactSecrets('Incorrect API key provided: sk-abcdef1234567890. You can find your API key at https://platform.openai.com.')).toBe(
      'Incorrect API key provided: [REDACTED]. You can find your API key at https://platform.openai.com.',
    );
    expect(redactSecrets('{"api_key": "s3cr3t-value", "model": "gpt-4o"}')).toBe('{"api_key": "[REDACTED]", "model": "gpt-4o"}');
    expect(redactSecrets('https://gw.example/v1?key=abc123&alt=json')).toBe('https://gw.example/v1?key=[REDACTED]&alt=json');
  });

  it('removes every occurrence of a known secret, whatever its shape', () => {
    const out = redactSecrets('echo: plain-local-key-7 and again plain-local-key-7', ['plain-local-key-7']);
    expect(out).toBe('echo: [REDACTED] and again [REDACTED]');
  });

  it('leaves ordinary text alone, and ignores known secrets too short to mean anything', () => {
    const text = 'model "gpt-4o-mini" was not found (HTTP 404). Check the model name; a monkey: banana at http://localhost:11434/v1.';
    expect(redactSecrets(text, ['a', undefined])).toBe(text);
  });

  it('runs in linear time on hostile input', () => {
    const hostile = [
      'Bearer '.repeat(20_000),
      '"api_key": '.repeat(20_000),
      'sk-'.repeat(20_000),
      'scheme-like-'.repeat(10_000),
      `https://${'u'.repeat(100_000)}`,
      'key=key:'.repeat(20_000),
      'eyJaaaaaaaaaa.'.repeat(20_000),
    ];
    for (const text of hostile) {
      const started = performance.now();
      redactSecrets(text);
      expect(performance.now() - started, text.slice(0, 20)).toBeLessThan(250);
    }
  });
});

describe('credentials in a URL with no user name', () => {
  it("redis://:password@host loses its password, as Redis URLs usually carry one", () => {
    const out = redactSecrets('cannot reach redis://:hunter2secret@cache.internal:6379/0 now');
    expect(out).not.toContain('hunter2secret');
    expect(out).toContain('redis://[REDACTED]@cache.internal:6379/0');
  });
});

describe('the secret goes, the sentence stays', () => {
  it("quotes OpenAI's missing-key message whole: its words and placeholders are no credentials", () => {
    const text =
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth " +
      "(i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API " +
      'from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.';
    expect(redactSecrets(text)).toBe(text);
  });

  it('keeps the scheme and the punctuation around a redacted value', () => {
    expect(redactSecrets('(sent Authorization: Bearer sk-live-abc123XYZ.)')).toBe('(sent Authorization: Bearer [REDACTED].)');
    expect(redactSecrets('Authorization: Basic dXNlcjpwYXNz')).toBe('Authorization: Basic [REDACTED]');
    expect(redactSecrets('Invalid key: please check it.')).toBe('Invalid key: please check it.');
    expect(redactSecrets('x-api-key: YOUR_OPENAI_API_KEY')).toBe('x-api-key: YOUR_OPENAI_API_KEY');
  });

  it('still removes what only looks like a word where the name says it is a secret, or the scheme says it is a credential', () => {
    expect(redactSecrets('login with password=hunter&next=1')).toBe('login with password=[REDACTED]&next=1');
    expect(redactSecrets('client_secret: letmein')).toBe('client_secret: [REDACTED]');
    expect(redactSecrets('Authorization: Basic abcdefgh')).toBe('Authorization: Basic [REDACTED]');
    expect(redactSecrets('token=abcdefghijklmnopqrstuv')).toBe('token=[REDACTED]');
    expect(redactSecrets('sent Bearer abc.def.ghi-jkl')).toBe('sent Bearer [REDACTED]');
  });
});
