import { buildIfStale } from './dist.js';

export default function setup(): void {
  buildIfStale();
}
