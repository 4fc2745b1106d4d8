import { z } from 'zod';
import { LeaseRequestSpec } from '../api/index.js';
const shape = LeaseRequestSpec.shape;
console.log(JSON.stringify(z.toJSONSchema(z.object({ a: shape.durationSeconds.describe('x'), b: shape.durationSeconds.unwrap().describe('y').optional() }), {io:'input'})));
console.log(Object.keys(shape));
