// The least JavaScript that keeps the ladder's rules T2–T10: idempotent ids, at most two
// attempts, a turn deadline and an attempt timeout, a per-attempt AbortController chained to the
// turn's by a listener, an acceptance gate, interrupt, budgets and bounded records. No events, no
// history, no streaming: the floor `npm run bench` measures turnguard's per-turn cost against.

export class LeanTurnController {
  constructor(routes, options) {
    this.routes = routes;
    this.options = options;
    this.turns = new Map();
    this.order = [];
    this.attemptsLeft = options.maxAttemptsPerSession ?? Infinity;
  }

  run(turnId, input) {
    const known = this.turns.get(turnId);
    if (known) return known.done;
    const { turnDeadlineMs, attemptTimeoutMs, maxInputChars = 4000 } = this.options;
    if (input.length > maxInputChars) return Promise.reject(new RangeError("input exceeds maxInputChars"));
    const startedAt = Date.now();
    const record = { turnId, input, status: "running", startedAt, deadlineAt: startedAt + turnDeadlineMs, attempts: [] };
    const turn = { record, abort: new AbortController() };
    turn.done = this.ladder(turn, attemptTimeoutMs, turnDeadlineMs);
    this.turns.set(turnId, turn);
    return turn.done;
  }

  async ladder(turn, attemptTimeoutMs, turnDeadlineMs) {
    const { record, abort } = turn;
    let deadlineTimer;
    const deadline = new Promise((resolve) => {
      deadlineTimer = setTimeout(() => resolve("deadline"), turnDeadlineMs);
    });
    for (let n = 1; n <= 2 && record.status === "running" && this.attemptsLeft > 0; n++) {
      this.attemptsLeft -= 1;
      const route = this.routes[Math.min(n - 1, this.routes.length - 1)];
      const attempt = { requestId: `${record.turnId}:attempt:${n}`, route: route.name, startedAt: Date.now(), result: "running" };
      record.attempts.push(attempt);
      const attemptAbort = new AbortController();
      const chain = () => attemptAbort.abort(abort.signal.reason);
      abort.signal.addEventListener("abort", chain);
      let attemptTimer;
      const timeout = new Promise((resolve) => {
        attemptTimer = setTimeout(() => resolve("timeout"), attemptTimeoutMs);
      });
      let outcome;
      try {
        const answer = route.generate({ requestId: attempt.requestId, turnId: record.turnId, input: record.input, signal: attemptAbort.signal });
        outcome = await Promise.race([answer, timeout, deadline]);
      } catch {
        outcome = undefined;
      }
      clearTimeout(attemptTimer);
      abort.signal.removeEventListener("abort", chain);
      attempt.finishedAt = Date.now();
      if (record.status !== "running") {
        attempt.result = "cancelled";
        break;
      }
      if (typeof outcome === "string" && outcome !== "timeout" && outcome !== "deadline") {
        attempt.result = "accepted";
        record.status = "accepted";
        record.acceptedRequestId = attempt.requestId;
        record.acceptedText = outcome;
        this.options.onAcceptedText(record.turnId, outcome);
        break;
      }
      attempt.result = outcome === "timeout" || outcome === "deadline" ? "timeout" : "error";
      attemptAbort.abort();
      if (outcome === "deadline") break;
    }
    clearTimeout(deadlineTimer);
    if (record.status === "running") {
      record.status = "exhausted";
      abort.abort();
      this.options.onRecovery(record.turnId, this.options.recoveryText);
    }
    this.order.push(record.turnId);
    if (this.order.length > (this.options.historyLimit ?? 1000)) this.turns.delete(this.order.shift());
    return record;
  }

  interrupt(turnId) {
    const turn = this.turns.get(turnId);
    if (!turn || turn.record.status !== "running") return false;
    turn.record.status = "cancelled";
    turn.abort.abort();
    return true;
  }

  getTurn(turnId) {
    return this.turns.get(turnId)?.record;
  }

  free() {
    for (const turnId of this.turns.keys()) this.interrupt(turnId);
  }
}
