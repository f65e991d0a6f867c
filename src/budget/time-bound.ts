/**
 * A promise that settles within `ms`: the value, or `onTimeout()`'s error once the time is up.
 * The timer never keeps a process alive on its own.
 */
export function withinTime<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref?.();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
