// `using` and `Disposable` for projects whose lib has `esnext.disposable` (TypeScript 5.2+).
import { LiveTranscriber, ReconnectPolicy, TurnController, gladiaProvisioner, type Route } from "turnguard";

const route: Route = { name: "primary", generate: () => "ok" };
{
  using scoped = new TurnController([route], {
    recoveryText: "Sorry?",
    onAcceptedText() {},
    onRecovery() {},
  });
  await scoped.run("turn-2", "hi");
}
{
  using dev = new LiveTranscriber({ provision: gladiaProvisioner({ apiKey: "dev-only" }) });
  await dev.start();
}
const disposable: Disposable = new ReconnectPolicy();
disposable[Symbol.dispose]();
