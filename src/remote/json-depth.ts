/**
 * How deep a parsed JSON value nests, walked without recursion and stopped past `max`: a value
 * from the wire nested 50,000 deep parses (V8's parser does not recurse) but overflows the stack
 * of anything that walks it recursively afterwards (`JSON.stringify`, the SDK's decoders).
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
