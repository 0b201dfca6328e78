"""prompt-adapt: friction signals counted from sessions, and (to come) the user profile."""
