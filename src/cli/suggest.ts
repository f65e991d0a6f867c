/**
 * "Did you mean --width?": the known word closest to a mistyped one, by edit distance with
 * transpositions (optimal string alignment), so "--widht", "--wdth" and "--witdh" all find it.
 */

export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `word`, when it is close enough to be a typo: at most two edits, and
 * fewer than a third of the word's length (so "-x" suggests nothing), or a prefix of at least
 * three letters ("--jaeger-u" for "--jaeger-url"). Ties go to the first candidate.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const bare = (s: string) => s.replace(/^-+/, '').toLowerCase();
  const w = bare(word);
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const c = bare(candidate);
    const distance = c.startsWith(w) && w.length >= 3 ? 0.5 : editDistance(w, c);
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  if (best === undefined) return undefined;
  return best.distance <= 2 && best.distance < Math.max(1, w.length / 3) + 0.01 ? best.candidate : undefined;
}
