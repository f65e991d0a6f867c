/**
 * The pieces the snapshot's reader is written with: checks that walk a value once, allocate
 * nothing while it is sound, and word each defect as the zod schema the reader replaced did
 * (same message, same path, same order, same rule for which branch of a union is reported), so a
 * refusal reads as it always has. A snapshot is read at every resume: zod's general machinery
 * cost several times the rest of a resume (docs/benchmarks.md, "resume").
 */

type Key = string | number;

/** Where a value sits, as a list up to the root: built only for a node that descends or a defect. */
interface At {
  readonly key: Key;
  readonly up: At | undefined;
}

/** One defect. `aborts` is zod's rule: a wrong type or value rules a branch out; a bound, a pattern or an extra key does not. */
export interface Issue {
  readonly path: Key[];
  readonly message: string;
  readonly aborts: boolean;
}

/** Checks a value found at `key` under `up` (the root has neither), adding its defects to `out`. */
export type Check = (value: unknown, up: At | undefined, key: Key | undefined, out: Issue[]) => void;

const here = (up: At | undefined, key: Key | undefined): At | undefined => (key === undefined ? up : { key, up });

function pathOf(up: At | undefined, key: Key | undefined): Key[] {
  const path: Key[] = [];
  for (let at = here(up, key); at !== undefined; at = at.up) path.push(at.key);
  return path.reverse();
}

export function issue(out: Issue[], up: At | undefined, key: Key | undefined, message: string, aborts: boolean): void {
  out.push({ path: pathOf(up, key), message, aborts });
}

/** What a value is, in zod's words ("received …"). */
function received(value: unknown): string {
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : Number.isFinite(value) ? 'number' : String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object' && Object.getPrototypeOf(value) !== Object.prototype && 'constructor' in value && value.constructor) return (value.constructor as { name: string }).name;
  return typeof value;
}

const wrongType = (out: Issue[], up: At | undefined, key: Key | undefined, expected: string, value: unknown) =>
  issue(out, up, key, `Invalid input: expected ${expected}, received ${received(value)}`, true);

const abortedSince = (out: Issue[], start: number): boolean => {
  for (let i = start; i < out.length; i++) if (out[i]!.aborts) return true;
  return false;
};

export interface StringRules {
  readonly min?: number;
  readonly max?: number;
  readonly pattern?: RegExp;
  /** Said instead of zod's "must match pattern" when the pattern is not met. */
  readonly patternRule?: string;
}

export function string(rules: StringRules = {}): Check {
  const { min, max, pattern, patternRule } = rules;
  return (value, up, key, out) => {
    if (typeof value !== 'string') return wrongType(out, up, key, 'string', value);
    if (min !== undefined && value.length < min) issue(out, up, key, `Too small: expected string to have >=${min} characters`, false);
    if (max !== undefined && value.length > max) issue(out, up, key, `Too big: expected string to have <=${max} characters`, false);
    if (pattern !== undefined && !pattern.test(value)) issue(out, up, key, patternRule ?? `Invalid string: must match pattern ${String(pattern)}`, false);
  };
}

export interface NumberRules {
  readonly int?: boolean;
  /** The least value; `above` makes it exclusive. */
  readonly min?: number;
  readonly above?: boolean;
  readonly max?: number;
}

export function number(rules: NumberRules = {}): Check {
  const { int = false, min, above = false, max } = rules;
  return (value, up, key, out) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return wrongType(out, up, key, 'number', value);
    if (int) {
      if (!Number.isInteger(value)) return wrongType(out, up, key, 'int', value);
      if (!Number.isSafeInteger(value)) {
        if (value > 0) issue(out, up, key, `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`, false);
        else issue(out, up, key, `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`, false);
      }
    }
    if (min !== undefined && (above ? value <= min : value < min)) issue(out, up, key, `Too small: expected number to be ${above ? '>' : '>='}${min}`, false);
    if (max !== undefined && value > max) issue(out, up, key, `Too big: expected number to be <=${max}`, false);
  };
}

const quoted = (v: unknown) => (typeof v === 'string' ? `"${v}"` : String(v));

/** One of `values` (a literal is an enum of one). */
export function oneOf(values: readonly (string | number | boolean)[]): Check {
  const known = new Set<unknown>(values);
  const message = values.length === 1 ? `Invalid input: expected ${quoted(values[0])}` : `Invalid option: expected one of ${values.map(quoted).join('|')}`;
  return (value, up, key, out) => {
    if (!known.has(value)) issue(out, up, key, message, true);
  };
}

export const anything: Check = () => {};

export const nullable = (check: Check): Check => (value, up, key, out) => {
  if (value !== null) check(value, up, key, out);
};

const OPTIONAL = new WeakSet<Check>();

export const optional = (check: Check): Check => {
  const optionalCheck: Check = (value, up, key, out) => {
    if (value !== undefined) check(value, up, key, out);
  };
  OPTIONAL.add(optionalCheck);
  return optionalCheck;
};

export function array(each: Check, min?: number): Check {
  return (value, up, key, out) => {
    if (!Array.isArray(value)) return wrongType(out, up, key, 'array', value);
    const start = out.length;
    if (value.length > 0) {
      const at = here(up, key);
      for (let i = 0; i < value.length; i++) each(value[i], at, i, out);
    }
    if (min !== undefined && value.length < min && !abortedSince(out, start)) issue(out, up, key, `Too small: expected array to have >=${min} items`, false);
  };
}

/** A rule over a whole object, checked once its fields raised nothing that aborts: the defect, if any, is at `field`. */
export interface Refinement {
  readonly holds: (value: Record<string, unknown>) => boolean;
  readonly field: string;
  readonly message: string;
}

/**
 * An object with exactly these fields (an extra one is a defect). Read in the order its keys
 * come (for-in reads a parsed object fastest); a defect's lines are put back in the fields'
 * order, as zod listed them, without reading anything twice.
 */
export function strictObject(shape: Readonly<Record<string, Check>>, refinement?: Refinement): Check {
  const names = Object.keys(shape);
  const checks = Object.values(shape);
  const indexOf = new Map(names.map((name, i) => [name, i]));
  const required = checks.map((c) => !OPTIONAL.has(c));
  const requiredCount = required.filter(Boolean).length;
  if (names.length > 31) throw new Error('a strict object of the snapshot format has at most 31 fields (they are marked seen in one number)');
  return (value, up, key, out) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return wrongType(out, up, key, 'object', value);
    const record = value as Record<string, unknown>;
    const start = out.length;
    const at = here(up, key);
    let requiredSeen = 0;
    let seen = 0;
    let extra: string[] | undefined;
    let ranges: (readonly [number, number] | undefined)[] | undefined;
    for (const field in record) {
      const i = indexOf.get(field);
      if (i === undefined) {
        (extra ??= []).push(field);
        continue;
      }
      const from = out.length;
      checks[i]!(record[field], at, field, out);
      seen |= 1 << i;
      if (required[i]) requiredSeen++;
      if (out.length !== from) (ranges ??= [])[i] = [from, out.length];
    }
    if (ranges !== undefined || requiredSeen !== requiredCount) inFieldOrder(record, at, out, start, seen, ranges ?? []);
    if (extra !== undefined) issue(out, up, key, `Unrecognized key${extra.length > 1 ? 's' : ''}: ${extra.map(quoted).join(', ')}`, false);
    if (refinement !== undefined && !abortedSince(out, start) && !refinement.holds(record)) issue(out, at, refinement.field, refinement.message, false);
  };

  /** The defects from `start` on, in the fields' order; a field for-in did not come to (absent) is checked here. */
  function inFieldOrder(record: Record<string, unknown>, at: At | undefined, out: Issue[], start: number, seen: number, ranges: (readonly [number, number] | undefined)[]): void {
    const found = out.slice(start);
    out.length = start;
    for (let i = 0; i < names.length; i++) {
      const range = ranges[i];
      if (range !== undefined) for (let n = range[0]; n < range[1]; n++) out.push(found[n - start]!);
      else if ((seen & (1 << i)) === 0) checks[i]!(record[names[i]!], at, names[i], out);
    }
  }
}

/**
 * One of `options`. `pick` names the one a sound value can only be (the options are told apart
 * by a field), which is tried alone; a value that fails it is read against every option, and
 * reported as zod reports a union: the one option not ruled out, else "Invalid input".
 */
export function union(options: readonly Check[], pick: (value: unknown) => number): Check {
  return (value, up, key, out) => {
    const chosen = pick(value);
    let pickedIssues: Issue[] | undefined;
    if (chosen >= 0) {
      pickedIssues = [];
      options[chosen]!(value, up, key, pickedIssues);
      if (pickedIssues.length === 0) return;
    }
    // The picked option is not read again: a defect deep in a tree of runs is read once per level, not twice.
    const results = options.map((option, i) => {
      if (i === chosen && pickedIssues !== undefined) return pickedIssues;
      const own: Issue[] = [];
      option(value, up, key, own);
      return own;
    });
    if (results.some((own) => own.length === 0)) return;
    const standing = results.filter((own) => !own.some((i) => i.aborts));
    if (standing.length === 1) out.push(...standing[0]!);
    else issue(out, up, key, 'Invalid input', true);
  };
}

/** The defects as zod's prettifyError lists them: shallowest first, each with where it is. */
export function prettify(issues: readonly Issue[]): string {
  const lines: string[] = [];
  for (const i of [...issues].sort((a, b) => a.path.length - b.path.length)) {
    lines.push(`✖ ${i.message}`);
    if (i.path.length > 0) lines.push(`  → at ${dotPath(i.path)}`);
  }
  return lines.join('\n');
}

function dotPath(path: readonly Key[]): string {
  let text = '';
  for (const seg of path) {
    if (typeof seg === 'number') text += `[${seg}]`;
    else if (/[^\w$]/.test(seg)) text += `[${JSON.stringify(seg)}]`;
    else text += text.length > 0 ? `.${seg}` : seg;
  }
  return text;
}
