// wired up once the task graph lands
