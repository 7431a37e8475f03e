// the image codec: PNG and JPEG through libpng and libjpeg-turbo, and pixel filters
