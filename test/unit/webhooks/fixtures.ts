import { computeSignature, signDelivery } from '../../../src/contract/signature.js';

/** Fixed clock and secrets for the verifier's tests. */
export const NOW = Date.UTC(2025, 5, 14, 12, 0, 0);
export const NOW_S = Math.floor(NOW / 1000);
export const SECRET = 'whs_current_0123456789abcdef';
export const OLD_SECRET = 'whs_previous_fedcba9876543210';

export const PROJECT = { id: '1300000000000000001', type: 'bot', platform: 'discord', platform_id: '1300000000000000002' };
export const USER = { id: '1300000000000000003', platform_id: '1300000000000000004', name: 'voter', avatar_url: 'https://cdn.example/a.png' };

export const VOTE_EVENT = {
  type: 'vote.create',
  data: {
    id: '1300000000000000009',
    weight: 1,
    created_at: '2025-06-14T11:59:58.000Z',
    expires_at: '2025-06-14T23:59:58.000Z',
    project: PROJECT,
    user: USER,
  },
};
export const VOTE_BODY = JSON.stringify(VOTE_EVENT);

/** The signature header of `body` signed with `secret` at `t` (seconds). */
export function header(body: string | Uint8Array, secret = SECRET, t = NOW_S): string {
  return signDelivery({ secret, rawBody: body, timestampSeconds: t })['x-topgg-signature']!;
}

/** The hex `v1` of `body` at `t`. */
export function v1(body: string | Uint8Array, secret = SECRET, t = NOW_S): string {
  return computeSignature(secret, t, body);
}
