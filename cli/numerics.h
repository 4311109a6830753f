/* numerics.h: `tegen numerics`: how accurately each recipe keeps each quantized
 * tensor of a layer, and what that does to the layer's outputs (see numerics.c). */
#ifndef TG_NUMERICS_H
#define TG_NUMERICS_H

/* cmd_numerics is the `tegen numerics` command. Returns the exit code (0, 1 error, 2 usage). */
int cmd_numerics(int argc, char **argv);

#endif
