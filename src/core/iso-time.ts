/** The second `isoPrefix` was formatted for, and its text up to the milliseconds (`YYYY-MM-DDTHH:mm:ss.` for years 0–9999). */
let formattedSecond = Number.NaN;
let isoPrefix = '';

/**
 * Now, as `new Date().toISOString()` writes it. Formatted once a second: on Node 20
 * `toISOString` costs 1.5–2.5 µs, more than the in-memory session store's whole append, and a
 * turn's record is stamped with it every turn.
 */
export function isoNow(): string {
  const ms = Date.now();
  const second = Math.floor(ms / 1000);
  if (second !== formattedSecond) {
    formattedSecond = second;
    // Cut before the milliseconds ("000Z"), not at a fixed length: a year past 9999 or before 0 is written longer.
    isoPrefix = new Date(second * 1000).toISOString().slice(0, -4);
  }
  const millis = ms - second * 1000;
  return `${isoPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}
