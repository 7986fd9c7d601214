import { encodePng } from './png';
import type { Skill } from './skill';

const SIZE = 32;

/** A real (small) PNG: a colour gradient, as MCP image content. */
export const screenshotSkill: Skill = {
  definition: {
    name: 'screenshot',
    title: 'Screenshot',
    description: 'Takes a screenshot of the agent screen.',
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
    side_effect_class: 'read',
    annotations: { readOnlyHint: true },
  },
  async run() {
    const rgb = new Uint8Array(SIZE * SIZE * 3);
    for (let y = 0; y < SIZE; y++) {
      for (let x = 0; x < SIZE; x++) rgb.set([x * 8, y * 8, 128], (y * SIZE + x) * 3);
    }
    return { content: [{ type: 'image', data: encodePng(SIZE, SIZE, rgb).toString('base64'), mimeType: 'image/png' }] };
  },
};
