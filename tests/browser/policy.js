// ReconnectPolicy scenarios in a real browser, through the JS API. `make(options)` is
// `new ReconnectPolicy(options)`.

import { assert, assertEq, assertThrows } from "./support.js";

const exact = { jitter: "none", initialDelayMs: 500, maxDelayMs: 30000 };

const scenarios = {
  async acceptThen4403ReprovisionsTwiceThenStops(make) {
    const policy = make(exact);
    const decisions = [];
    let now = 0;
    for (let i = 0; i < 3; i++) {
      policy.onOpen(now);
      const decision = policy.onClose(4403, now + 5);
      decisions.push([decision.action, decision.reason]);
      now += 5 + decision.delayMs;
    }
    assertEq(decisions, [
      ["reprovision", "session_dead"],
      ["reprovision", "session_dead"],
      ["stop", "reprovision_limit"],
    ], "decisions");
    assertEq(policy.backoffAttempt, 2, "the stop took no backoff step");
    assertEq(policy.onClose(1006, now + 10).action, "stop", "a stop is final");
  },

  async acceptThen1006GrowsToTheCapAndNeverResetsOnOpen(make) {
    const policy = make(exact);
    const delays = [];
    let now = 0;
    for (let i = 0; i < 9; i++) {
      policy.onOpen(now);
      const decision = policy.onClose(1006, now + 1);
      assertEq([decision.action, decision.reason], ["reconnect_same_url", "abnormal_close"], `close ${i}`);
      delays.push(decision.delayMs);
      now += 1 + decision.delayMs;
    }
    assertEq(delays, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000], "delays");
    assertEq(policy.backoffAttempt, 9, "backoffAttempt");
  },

  async stableOpenResetsTheBackoffInclusive(make) {
    const policy = make({ ...exact, stableOpenMs: 5000 });
    policy.onOpen(0);
    policy.onClose(1006, 1);
    policy.onOpen(1000);
    assertEq(policy.onClose(1006, 1000 + 4999).delayMs, 1000, "4999 ms open is not stable");
    policy.onOpen(10000);
    assertEq(policy.onClose(1006, 15000).delayMs, 500, "exactly 5000 ms open resets");
    assertEq(policy.backoffAttempt, 1, "one step since the reset");
  },

  async detachStopsEverything(make) {
    const policy = make(exact);
    policy.onOpen(0);
    policy.onClientDetach();
    for (const code of [1000, 1006, 4403]) {
      assertEq(policy.onClose(code, 100), { action: "stop", delayMs: 0, reason: "client_detached" }, `close ${code}`);
    }
    assertEq(policy.onProvisionFailed(503, 200).action, "stop", "provisioning after detach");
  },

  async provisioningFailuresBackOffOrStop(make) {
    const policy = make(exact);
    assertEq(policy.onProvisionFailed(429, 0), { action: "reprovision", delayMs: 500, reason: "provision_failed" }, "429");
    assertEq(policy.onProvisionFailed(0, 600).delayMs, 1000, "network error backs off further");
    assertEq(policy.onProvisionFailed(401, 2000), { action: "stop", delayMs: 0, reason: "provision_rejected" }, "401");
  },

  async seededJitterIsRepeatableAndWithinTheCap(make) {
    const draw = (seed) => {
      const policy = make({ randomSeed: seed, initialDelayMs: 100, maxDelayMs: 1000 });
      return Array.from({ length: 12 }, (_, i) => {
        policy.onOpen(i); // opened, then dropped: not a failed connect (R5)
        return policy.onClose(1006, i).delayMs;
      });
    };
    const first = draw(42);
    assertEq(draw(42), first, "the same seed gives the same delays");
    assert(JSON.stringify(draw(43)) !== JSON.stringify(first), "another seed gives other delays");
    first.forEach((delay, i) => {
      const cap = Math.min(1000, 100 * 2 ** i);
      assert(Number.isInteger(delay) && delay >= 0 && delay <= cap, `delay ${i} = ${delay} within [0, ${cap}]`);
    });
    const unseeded = make();
    assertEq(unseeded.onClose(1006, 0).action, "reconnect_same_url", "defaults work without options");
  },

  async threeFailedConnectsMakeTheUrlDead(make) {
    const policy = make(exact);
    const reasons = [];
    let now = 0;
    for (let i = 0; i < 9; i++) {
      const decision = policy.onClose(1006, now); // never opened: an upgrade refused with 404
      reasons.push(decision.reason);
      if (i === 1) assertEq(policy.failedConnects, 2, "two in a row");
      now += decision.delayMs + 1;
    }
    assertEq(reasons, [
      "abnormal_close", "abnormal_close", "dead_url",
      "abnormal_close", "abnormal_close", "dead_url",
      "abnormal_close", "abnormal_close", "dead_session",
    ], "re-provisions within the window, then stop");
    const opened = make({ ...exact, maxFailedConnects: 2 });
    opened.onClose(1006, 0);
    opened.onOpen(10);
    assertEq(opened.onClose(1006, 20).reason, "abnormal_close", "an open ends the run");
    assertEq(opened.onClose(1006, 30).reason, "abnormal_close", "one in a row");
    assertEq(opened.onClose(1006, 40).action, "reprovision", "maxFailedConnects: 2");
  },

  async endSessionReprovisionsWithinTheWindow(make) {
    const policy = make(exact);
    const decisions = [];
    for (let i = 0; i < 3; i++) {
      policy.onOpen(i * 1000);
      decisions.push(policy.onSessionEnded(i * 1000 + 10));
    }
    assertEq(decisions.map((d) => [d.action, d.reason]), [
      ["reprovision", "session_ended"],
      ["reprovision", "session_ended"],
      ["stop", "dead_session"],
    ], "end_session counts in R3's window");
  },

  async provisioningWithoutAStatusGivesUpAfterMaxProvisionAttempts(make) {
    const policy = make({ ...exact, maxProvisionAttempts: 3 });
    const actions = [0, 1, 2].map((i) => policy.onProvisionFailed(0, i * 10_000));
    assertEq(actions.map((d) => [d.action, d.reason]), [
      ["reprovision", "provision_failed"],
      ["reprovision", "provision_failed"],
      ["stop", "provision_exhausted"],
    ], "three calls in all");
    const reset = make({ ...exact, maxProvisionAttempts: 2 });
    reset.onProvisionFailed(0, 0);
    reset.onProvisioned();
    assertEq(reset.onProvisionFailed(0, 1000).action, "reprovision", "a session ends the run");
  },

  async freeIsIdempotent(make) {
    const policy = make(exact);
    policy.free();
    policy.free();
    if (typeof Symbol.dispose === "symbol") policy[Symbol.dispose]();
    await assertThrows(() => policy.onOpen(0), TypeError, /freed/, "a method after free");
    await assertThrows(() => policy.backoffAttempt, TypeError, /freed/, "a getter after free");
    const next = make(exact);
    assertEq(next.onClose(1006, 0).action, "reconnect_same_url", "the module still serves");
    next[Symbol.dispose ?? "free"]();
  },

  async badInputThrowsNamedErrors(make) {
    const cases = [
      ["options not an object", "fast", TypeError, /options/],
      ["negative initialDelayMs", { initialDelayMs: -1 }, RangeError, /initialDelayMs/],
      ["string stableOpenMs", { stableOpenMs: "5s" }, TypeError, /stableOpenMs/],
      ["zero window", { reprovisionWindowMs: 0 }, RangeError, /reprovisionWindowMs/],
      ["fractional max", { maxReprovisionsPerWindow: 1.5 }, RangeError, /maxReprovisionsPerWindow/],
      ["unknown jitter", { jitter: "some" }, RangeError, /jitter/],
      ["max below initial", { initialDelayMs: 1000, maxDelayMs: 10 }, RangeError, /maxDelayMs/],
      ["negative seed", { randomSeed: -1 }, RangeError, /randomSeed/],
      ["zero maxFailedConnects", { maxFailedConnects: 0 }, RangeError, /maxFailedConnects/],
      ["string maxProvisionAttempts", { maxProvisionAttempts: "5" }, TypeError, /maxProvisionAttempts/],
    ];
    for (const [label, options, type, pattern] of cases) {
      await assertThrows(() => make(options), type, pattern, label);
    }
    const policy = make(exact);
    await assertThrows(() => policy.onClose(1006.5, 0), RangeError, /code/, "fractional code");
    await assertThrows(() => policy.onClose("1006", 0), TypeError, /code/, "string code");
    await assertThrows(() => policy.onClose(1006, NaN), RangeError, /nowMs/, "NaN time");
    await assertThrows(() => policy.onOpen(Infinity), RangeError, /nowMs/, "infinite time");
    await assertThrows(() => policy.onOpen(undefined), TypeError, /nowMs/, "missing time");
    await assertThrows(() => policy.onProvisionFailed(-1, 0), RangeError, /httpStatusOrZero/, "negative status");
    await assertThrows(() => policy.onSessionEnded(NaN), RangeError, /nowMs/, "NaN end_session time");
    assertEq(policy.onClose(1006, 0).delayMs, 500, "bad input changed nothing");
  },
};

export async function runScenario(name, make) {
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`no scenario named ${name}`);
  await scenario(make);
}
