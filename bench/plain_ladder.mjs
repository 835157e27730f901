// The same turn ladder written plainly in JavaScript, as an app would without turnguard: the
// baseline `npm run bench` measures turnguard against. It does the same work per turn — a turn
// AbortController, an attempt AbortController chained to it, a deadline and an attempt timer, an
// acceptance gate, a record with its attempts, events, idempotent ids and a bounded history.

export class PlainTurnController {
  constructor(routes, options) {
    this.routes = routes;
    this.options = options;
    this.turns = new Map();
    this.settledOrder = [];
    this.historyLimit = options.historyLimit ?? 1000;
  }

  run(turnId, input) {
    const existing = this.turns.get(turnId);
    if (existing) return existing.done;
    const now = Date.now();
    const turn = {
      record: {
        turnId, input, status: "running", startedAt: now,
        deadlineAt: now + this.options.turnDeadlineMs, attempts: [],
      },
      abort: new AbortController(),
      attemptAbort: null,
      deadlineTimer: 0,
      attemptTimer: 0,
    };
    turn.done = new Promise((resolve) => { turn.resolve = resolve; });
    this.turns.set(turnId, turn);
    this.emit({ type: "turn_started", turnId, at: now });
    turn.deadlineTimer = setTimeout(() => this.onDeadline(turn), this.options.turnDeadlineMs);
    this.startAttempt(turn);
    return turn.done;
  }

  startAttempt(turn) {
    const { record } = turn;
    const number = record.attempts.length + 1;
    const route = this.routes[Math.min(number - 1, this.routes.length - 1)];
    const requestId = `${record.turnId}:attempt:${number}`;
    const now = Date.now();
    const attempt = { requestId, route: route.name, startedAt: now, result: "running" };
    record.attempts.push(attempt);
    const attemptAbort = new AbortController();
    turn.attemptAbort = attemptAbort;
    const signal = AbortSignal.any([turn.abort.signal, attemptAbort.signal]);
    const timeout = Math.min(this.options.attemptTimeoutMs, record.deadlineAt - now);
    turn.attemptTimer = setTimeout(() => this.onAttemptTimeout(turn, attempt), timeout);
    this.emit({ type: "attempt_started", turnId: record.turnId, requestId, route: route.name, at: now });
    let result;
    try {
      result = Promise.resolve(route.generate({ requestId, turnId: record.turnId, input: record.input, signal }));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (text) => this.onResult(turn, attempt, typeof text === "string" && text.trim() ? text : null, "no_text"),
      (error) => this.onResult(turn, attempt, null, error && error.status ? `http_${error.status}` : "route_error"),
    );
  }

  onResult(turn, attempt, text, error) {
    const now = Date.now();
    if (attempt.result !== "running" || turn.record.status !== "running") {
      if (text !== null && (attempt.result === "timeout" || attempt.result === "cancelled")) attempt.result = "late";
      return;
    }
    clearTimeout(turn.attemptTimer);
    attempt.finishedAt = now;
    if (text !== null) {
      attempt.result = "accepted";
      turn.record.acceptedRequestId = attempt.requestId;
      turn.record.acceptedText = text;
      this.emit({ type: "attempt_finished", turnId: turn.record.turnId, requestId: attempt.requestId, result: "accepted", at: now });
      this.emit({ type: "accepted", turnId: turn.record.turnId, requestId: attempt.requestId, at: now });
      this.settle(turn, "accepted");
      this.options.onAcceptedText(turn.record.turnId, text);
      return;
    }
    attempt.result = "error";
    attempt.error = error;
    this.emit({ type: "attempt_finished", turnId: turn.record.turnId, requestId: attempt.requestId, result: "error", at: now });
    this.next(turn);
  }

  onAttemptTimeout(turn, attempt) {
    if (attempt.result !== "running") return;
    attempt.result = "timeout";
    attempt.finishedAt = Date.now();
    turn.attemptAbort.abort(new DOMException("attempt timed out", "TimeoutError"));
    this.next(turn);
  }

  next(turn) {
    if (turn.record.attempts.length < (this.options.maxAttemptsPerTurn ?? 2)) this.startAttempt(turn);
    else this.recover(turn, "exhausted");
  }

  onDeadline(turn) {
    if (turn.record.status !== "running") return;
    turn.abort.abort(new DOMException("turn ended", "AbortError"));
    this.recover(turn, "deadline");
  }

  recover(turn, reason) {
    turn.record.recoveryReason = reason;
    this.emit({ type: "recovered", turnId: turn.record.turnId, reason, at: Date.now() });
    this.settle(turn, "exhausted");
    this.options.onRecovery(turn.record.turnId, this.options.recoveryText);
  }

  interrupt(turnId) {
    const turn = this.turns.get(turnId);
    if (!turn || turn.record.status !== "running") return false;
    turn.abort.abort(new DOMException("turn ended", "AbortError"));
    this.settle(turn, "cancelled");
    return true;
  }

  settle(turn, status) {
    turn.record.status = status;
    clearTimeout(turn.deadlineTimer);
    clearTimeout(turn.attemptTimer);
    this.settledOrder.push(turn.record.turnId);
    while (this.settledOrder.length > this.historyLimit) this.turns.delete(this.settledOrder.shift());
    turn.resolve(structuredClone(turn.record));
  }

  getTurn(turnId) {
    const turn = this.turns.get(turnId);
    return turn ? structuredClone(turn.record) : undefined;
  }

  emit(event) {
    if (this.options.onEvent) this.options.onEvent(event);
  }
}
