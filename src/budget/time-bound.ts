/**
 * A promise that settles within `ms`: the value, or `onTimeout()`'s error once the time is up.
 * The timer keeps the process alive while it waits, and only then: it is cleared as soon as `p`
 * settles. An unref'd timer let a short script whose only pending work was a hung lookup exit
 * (code 13, an unsettled top-level await) with nothing printed, instead of with this error.
 */
export function withinTime<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
