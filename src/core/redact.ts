/**
 * Secrets out of text that leaves symfonic's hands: provider error bodies echo keys back
 * ("Incorrect API key provided: sk-…", a gateway dumping the request headers), and that text
 * travels on into errors, logs and span status messages, which are read and stored by people and
 * systems the key was never meant for. Redaction is by shape, since the text is foreign; callers
 * that know their own secrets pass them too, so a key of no known shape is caught as well.
 */

export const REDACTED = '[REDACTED]';

/** Names under which a secret travels in headers, JSON bodies, form fields and query strings. */
const SECRET_NAMES =
  'x-api-key|api[-_]?key|x-goog-api-key|authorization|proxy-authorization|access[-_]?token|refresh[-_]?token|' +
  'id[-_]?token|auth[-_]?token|client[-_]?secret|secret[-_]?key|secret|password|passwd|token|key|signature|sig';

/** A known secret shorter than this is not replaced: it would scramble ordinary words, not hide anything. */
const MIN_KNOWN_SECRET_LENGTH = 4;

/** Names whose value is a secret whatever it looks like: a password is often an ordinary word. */
const PASSWORD_NAME = /^(?:password|passwd|secret|client[-_]?secret|secret[-_]?key)$/i;

/**
 * A value that is plainly no credential: an ordinary word ("auth", "missing") or a placeholder
 * ("YOUR_KEY", "YOUR_OPENAI_API_KEY"). Real keys and tokens are long and carry digits, while the
 * providers' own help texts are full of these ("…using Bearer auth (i.e. Authorization: Bearer
 * YOUR_KEY)"): redacting them garbles the sentence and hides nothing.
 */
function isPlainWord(value: string): boolean {
  return (value.length <= 12 && /^[A-Za-z]+(?:[_-][A-Za-z]+)*$/.test(value)) || (value.length <= 48 && /^[A-Z]+(?:_[A-Z]+)+$/.test(value));
}

/** `name: [scheme] value` or `name=value`: the value goes unless it is a plain word under a name that is not a password's. */
function redactField(match: string, before: string, name: string, separator: string, scheme: string | undefined, value: string): string {
  const credentialScheme = scheme !== undefined && /^(?:basic|digest)/i.test(scheme);
  if (!PASSWORD_NAME.test(name) && !credentialScheme && isPlainWord(value)) return match;
  return `${before}${name}${separator}${scheme ?? ''}${REDACTED}`;
}

// Every repetition that can fail late is bounded, so hostile text costs linear time, not quadratic.
const RULES: readonly [RegExp, string | ((match: string, ...groups: string[]) => string)][] = [
  // Credentials inside a URL: scheme://user:password@host
  [/\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/:@]{0,256}:[^\s/@]{0,256}@/gi, `$1${REDACTED}@`],
  // "api_key": "…" in JSON (and single-quoted variants in logs of JSON-ish text).
  [new RegExp(`(["'](?:${SECRET_NAMES})["']\\s*:\\s*)(?:"(?:[^"\\\\]|\\\\.)*"|'(?:[^'\\\\]|\\\\.)*')`, 'gi'), `$1"${REDACTED}"`],
  // Header or form style: `x-api-key: …`, `Authorization: Bearer …`, `password=…`. The value ends
  // before brackets and a closing full stop, which belong to the sentence around it.
  [
    new RegExp(
      `(^|[^a-z0-9_-])(${SECRET_NAMES})(\\s*[:=]\\s*)((?:bearer|basic|token|digest)\\s+)?([^\\s,;"'&<>{}()\\[\\]]*[^\\s,;"'&<>{}()\\[\\].])`,
      'gi',
    ),
    (match, before, name, separator, scheme, value) => redactField(match, before!, name!, separator!, scheme, value!),
  ],
  // A bearer token anywhere else ("Bearer auth" in a sentence is a word, and stays).
  [/\b(bearer\s+)([a-z0-9._~+/=-]+)/gi, (match, prefix, token) => (isPlainWord(token!) ? match : `${prefix}${REDACTED}`)],
  // Key shapes that are secrets wherever they stand: OpenAI and Anthropic (sk-…), Google (AIza…), JWTs.
  [/\bsk-[a-z0-9_*-]{6,}/gi, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{20,}/g, REDACTED],
  [/\beyJ[a-z0-9_-]{8,}\.[a-z0-9_-]{8,}\.[a-z0-9_-]+/gi, REDACTED],
];

/**
 * `text` with API keys, bearer tokens, credentials in URLs and secret-named fields (JSON, headers,
 * query strings) replaced by `[REDACTED]`, and every occurrence of each `known` secret too.
 */
export function redactSecrets(text: string, known: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of known) {
    if (secret !== undefined && secret.length >= MIN_KNOWN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement as (match: string, ...groups: string[]) => string);
  return out;
}

/** The most error text that reaches a model or a span: enough to act on, never a whole response body. */
export const MAX_VISIBLE_ERROR_CHARS = 4096;

/**
 * Error text as a model or a span may see it: secrets redacted, and cut to MAX_VISIBLE_ERROR_CHARS
 * (saying so). The one gate every error text passes before a third party reads it.
 */
export function modelVisibleText(text: string): string {
  const clean = redactSecrets(text.length > MAX_VISIBLE_ERROR_CHARS * 4 ? text.slice(0, MAX_VISIBLE_ERROR_CHARS * 4) : text);
  return clean.length <= MAX_VISIBLE_ERROR_CHARS ? clean : `${clean.slice(0, MAX_VISIBLE_ERROR_CHARS)}… [cut: ${text.length} characters in all]`;
}
