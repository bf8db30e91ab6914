import { describe, expect, it } from 'vitest';
import { clientTour } from '../../../examples/client-tour.js';
import { startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { startReceiver } from '../../helpers/receiver.js';

describe("the client examples of docs/client.md", () => {
  it('run against the emulator and do what docs/client.md says', async () => {
    const emu = await startTestEmulator({ settings: { allowHttpLoopback: true } });
    const owner = emu.admin.createUser({ id: '1000000000000000001', username: 'owner' });
    const voter = emu.admin.createUser({ id: '1000000000000000002', username: 'voter', platform_id: '200000000000000002' });
    const { project, project_token } = emu.admin.createProject({ platform: 'discord', type: 'bot', name: 'Tour Bot', owner_user_id: owner.id });
    // Weekend votes for bots weigh 2: read the weight the emulator gave this one.
    const { weight } = emu.admin.castVote({ project_id: project.id, user_id: voter.id });
    const redirectUri = 'http://127.0.0.1:8976/callback';
    const app = emu.admin.createApplication({ redirect_uris: [redirectUri] });
    const receiver = await startReceiver();

    const out = await clientTour({
      v1BaseUrl: emu.urls.v1,
      v0BaseUrl: emu.urls.v0,
      authBaseUrl: emu.urls.auth,
      projectToken: project_token,
      clientId: app.client_id,
      clientSecret: app.client_secret,
      redirectUri,
      webhookUrl: receiver.url,
      approve: async (url) => {
        const res = await call(`${url}&login_as=${owner.id}&decision=approve`);
        return res.headers.get('location')!;
      },
    });

    expect(out).toContain(`project Tour Bot ${weight}`);
    expect(out).toContain('announced v2 is out');
    expect(out).toContain('cooldown 4 h');
    expect(out.filter((line) => line.startsWith('vote '))).toEqual([`vote ${voter.id} ${weight}`]);
    expect(out).toContain('voted now? true');
    expect(out).toContain('v0 stats {"server_count":1520,"shards":[800,720],"shard_count":2}');
    expect(out).toContain('v0 voted? true');
    expect(out).toContain('me owner');
    expect(out).toContain('webhook secret starts with whs_');
    expect(receiver.requests.map((r) => r.json.type)).toEqual(['webhook.test']);
    expect(emu.admin.metrics(project.id).map((m) => m.source)).toEqual(['v1', 'v1-batch', 'v1-batch', 'v0']);
    expect(emu.admin.commands(project.id)).toEqual([{ name: 'ping', description: 'Replies with pong', type: 1 }]);
  });
});
