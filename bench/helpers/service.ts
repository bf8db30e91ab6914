/**
 * The service the benches' agents talk to: the emulator (src/emulator, which shares no code with
 * the agent) in the bench's process, with one bot project whose token the agent is given.
 */
import { startEmulator } from '../../src/emulator/index.js';

export interface BenchService {
  v1: string;
  v0: string;
  /** The project token of the bench's bot. */
  token: string;
  /** The bot's service project ID and platform ID: a delivery for another project is refused (issue 34). */
  projectId: string;
  platformId: string;
  close(): Promise<void>;
}

/** Starts the emulator on 127.0.0.1:0 with one bot project. */
export async function startBenchService(): Promise<BenchService> {
  const emulator = await startEmulator();
  const owner = emulator.admin.createUser({ username: 'bench-owner' });
  const project = emulator.admin.createProject({ platform: 'discord', type: 'bot', owner_user_id: owner.id, name: 'Bench Bot' });
  return {
    v1: emulator.urls.v1,
    v0: emulator.urls.v0,
    token: project.project_token,
    projectId: project.project.id,
    platformId: project.project.platform_id,
    close: () => emulator.close(),
  };
}
