/**
 * Secrets out of text that leaves symfonic's hands: provider error bodies echo keys back
 * ("Incorrect API key provided: sk-…", a gateway dumping the request headers), a tool's error
 * quotes the environment it failed in (`DB_PASSWORD=…`), and that text travels on into errors,
 * logs, span status messages and the model's context, which are read and stored by people and
 * systems the key was never meant for. Redaction is by name (a value under a secret-named field,
 * whatever the field's prefix, case or separator) and by shape (the published formats of the
 * common providers' keys), since the text is foreign; callers that know their own secrets pass
 * them too, so a key of no known shape is caught as well.
 */

export const REDACTED = '[REDACTED]';

/** A known secret shorter than this is not replaced: it would scramble ordinary words, not hide anything. */
const MIN_KNOWN_SECRET_LENGTH = 4;

/**
 * A field name that carries a secret: one containing any of these words, whatever comes before or
 * after (`DB_PASSWORD`, `aws_secret_access_key`, `x_auth_token`, `MY_API_KEY`, `client-secret`),
 * or one of the short names that mean a credential only on their own (`key`, `sig`). `auth` is not
 * `author`; `tokenizer` names no token.
 */
const SECRET_NAME =
  /password|passwd|passphrase|secret|token(?!iz)|api[-_.]?key|auth(?:ori[sz]ation|(?!or))|credential|private[-_.]?key|^(?:key|signature|sig|(?:set-)?cookie)$/i;

/** Names whose value is a secret whatever it looks like: a password is often an ordinary word. */
const ALWAYS_SECRET_NAME = /password|passwd|passphrase|secret|credential|private[-_.]?key/i;

/**
 * A value that is plainly no credential: an ordinary word ("auth", "missing"), a placeholder
 * ("YOUR_KEY", "YOUR_OPENAI_API_KEY") or a number (`max_tokens=4096`). Real keys and tokens are
 * long and carry digits and letters, while the providers' own help texts are full of these
 * ("…using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)"): redacting them garbles the
 * sentence and hides nothing.
 */
function isPlainWord(value: string): boolean {
  return (
    (value.length <= 12 && /^[A-Za-z]+(?:[_-][A-Za-z]+)*$/.test(value)) ||
    (value.length <= 48 && /^[A-Z]+(?:_[A-Z]+)+$/.test(value)) ||
    /^-?[0-9][0-9.,_]{0,20}$/.test(value)
  );
}

/** Whether the value after `name` goes: under a password's name always, else unless it is plainly no credential. */
function hides(name: string, value: string, scheme: string | undefined): boolean {
  if (!SECRET_NAME.test(name)) return false;
  if (ALWAYS_SECRET_NAME.test(name) || (scheme !== undefined && /^(?:basic|digest)/i.test(scheme))) return true;
  return !isPlainWord(value);
}

// Every repetition is bounded or cannot backtrack, so hostile text costs linear time, not quadratic.
/** `name` then `:` or `=`: the name is taken whole (an atomic group), so it cannot shrink to find a match. */
const FIELD = /(?<![A-Za-z0-9_.-])(?=([A-Za-z0-9_.-]{1,128}))\1(\s{0,16}[:=]\s{0,16})/g;
/**
 * The value after a field's separator: quoted, or up to the next space or delimiter, ending before
 * a closing full stop, which belongs to the sentence around it; an auth scheme stays in front.
 */
const VALUE = /((?:bearer|basic|token|digest)\s+)?("(?:[^"\\\n]|\\.){0,4096}"|'(?:[^'\\\n]|\\.){0,4096}'|[^\s,;"'&<>{}()[\]]{0,4096}[^\s,;"'&<>{}()[\].])/iy;

/**
 * Header, form, environment and YAML style: `DB_PASSWORD=…`, `x-api-key: …`, `Authorization:
 * Bearer …`, `"client_secret": "…"`. A scan rather than one replace: a field whose name is no
 * secret's is stepped over at its separator, so a secret-named field inside its value is still found.
 */
function redactFields(text: string): string {
  let out = '';
  let copied = 0;
  FIELD.lastIndex = 0;
  for (let m = FIELD.exec(text); m !== null; m = FIELD.exec(text)) {
    // The name first: reading a value costs its length, and most fields are no secret's.
    if (!SECRET_NAME.test(m[1]!)) continue;
    VALUE.lastIndex = FIELD.lastIndex;
    const v = VALUE.exec(text);
    if (v === null) continue;
    const [whole, scheme, raw] = v as unknown as [string, string | undefined, string];
    const quote = raw[0] === '"' || raw[0] === "'" ? raw[0] : '';
    const value = quote ? raw.slice(1, -1) : raw;
    if (!hides(m[1]!, value, scheme)) continue;
    out += text.slice(copied, FIELD.lastIndex) + (scheme ?? '') + quote + REDACTED + quote;
    copied = FIELD.lastIndex = VALUE.lastIndex;
    if (whole.length === 0) FIELD.lastIndex++;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** `"name": "value"` in JSON, where the quote after the name keeps it from the field scan above. */
const QUOTED_FIELD = /(["'])([A-Za-z0-9_.-]{1,128})\1(\s{0,16}:\s{0,16})("(?:[^"\\]|\\.){0,4096}"|'(?:[^'\\]|\\.){0,4096}')/g;

/**
 * Key shapes that are secrets wherever they stand, with no name in front: the formats the
 * providers publish (so a scanner can find a leaked key, as this one does).
 */
const KEY_SHAPES: readonly RegExp[] = [
  /\bsk-[a-z0-9_*-]{6,}/gi, // OpenAI (sk-, sk-proj-), Anthropic (sk-ant-), DeepSeek and others
  /\b[spr]k_(?:live|test)_[0-9a-z]{8,}/gi, // Stripe secret, publishable and restricted keys
  /\b(?:whsec|acct|cs_live|cs_test)_[0-9a-z]{16,}/gi, // Stripe webhook secrets and session secrets
  /\bgh[opusr]_[0-9a-z]{20,}/gi, // GitHub personal, OAuth, user, server and refresh tokens
  /\bgithub_pat_[0-9a-z_]{20,}/gi, // GitHub fine-grained personal tokens
  /\bxox[abposr]-[0-9a-z-]{8,}/gi, // Slack bot, user, app and legacy tokens
  /\bxapp-[0-9a-z-]{8,}/gi, // Slack app-level tokens
  /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g, // AWS access key ids (long-term and temporary)
  /\bAIza[0-9A-Za-z_-]{20,}/g, // Google API keys
  /\bglpat-[0-9a-z_-]{20,}/gi, // GitLab personal access tokens
  /\bnpm_[0-9a-z]{36}\b/gi, // npm access tokens
  /\beyJ[a-z0-9_-]{8,}\.[a-z0-9_-]{8,}\.[a-z0-9_-]+/gi, // JWTs
  // A PEM private key, its body up to the end line (or to the end of the text, if the text was cut).
  /-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----[^-]*(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----)?/g,
];

type Rule = readonly [RegExp, string | ((match: string, ...groups: string[]) => string)];

/** What is found by the name in front of it, before the shapes: a field's rule knows where its value ends. */
const NAMED: readonly Rule[] = [
  // Credentials inside a URL: scheme://user:password@host
  [/\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/:@]{0,256}:[^\s/@]{0,256}@/gi, `$1${REDACTED}@`],
  [QUOTED_FIELD, (match, quote, name, separator, value) => (hides(name!, value!.slice(1, -1), undefined) ? `${quote}${name}${quote}${separator}"${REDACTED}"` : match)],
];

const SHAPED: readonly Rule[] = [
  // A bearer token anywhere else ("Bearer auth" in a sentence is a word, and stays).
  [/\b(bearer\s+)([a-z0-9._~+/=-]+)/gi, (match, prefix, token) => (isPlainWord(token!) ? match : `${prefix}${REDACTED}`)],
  ...KEY_SHAPES.map((shape): [RegExp, string] => [shape, REDACTED]),
];

/**
 * `text` with API keys, bearer tokens, credentials in URLs and secret-named fields (JSON, headers,
 * environment lines, query strings) replaced by `[REDACTED]`, and every occurrence of each `known`
 * secret too.
 */
export function redactSecrets(text: string, known: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of known) {
    if (secret !== undefined && secret.length >= MIN_KNOWN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of NAMED) out = out.replace(pattern, replacement as (match: string, ...groups: string[]) => string);
  out = redactFields(out);
  for (const [pattern, replacement] of SHAPED) out = out.replace(pattern, replacement as (match: string, ...groups: string[]) => string);
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

/**
 * An error as a log line may carry it: its name, and its message and stack through the same
 * gate, since a log is read and shipped as widely as a span.
 */
export function loggableError(error: unknown): { type: string; message: string; stack?: string } {
  const e = error instanceof Error ? error : new Error(String(error));
  const said = { type: e.name || 'Error', message: modelVisibleText(e.message) };
  return e.stack === undefined ? said : { ...said, stack: modelVisibleText(e.stack) };
}
