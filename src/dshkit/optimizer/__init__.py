"""The evidence-driven prompt optimizer (seed 000): a person's raw words become one instruction
for the working agent that stands on evidence, or asks first where facts cannot be known."""
