import type { CheckpointWatch } from './dbos-driver.js';

/** The time a step's record may take, not counting its body: a stall is the database's, not the model's. */
export class StepWatch implements CheckpointWatch {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limitMs: number,
    private readonly onStall: () => void,
  ) {
    this.resume();
  }

  pause(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  resume(): void {
    this.timer = setTimeout(this.onStall, this.limitMs);
    this.timer.unref();
  }

  stop(): void {
    this.pause();
  }
}
