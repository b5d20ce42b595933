#!/usr/bin/env node
console.log('fedscore');
